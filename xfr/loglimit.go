package xfr

// warnClient logs a warning an outside client caused, unless one with the
// same key was logged less than clientLineInterval ago; the next one
// logged says how many were left out (loglimit).
func (s *Server) warnClient(key, msg string, args ...any) {
	s.clientLines.Warn(s.log, key, msg, args...)
}
