package xfr

import "github.com/miekg/dns"

// Placeholders until axfr.go, ixfr.go and tsig.go land.

func (s *Server) serveAXFR(w dns.ResponseWriter, r *dns.Msg, st *settings) {
	s.reply(w, r, dns.RcodeNotImplemented)
}

func (s *Server) serveIXFR(w dns.ResponseWriter, r *dns.Msg, st *settings) {
	s.reply(w, r, dns.RcodeNotImplemented)
}

// tsigProvider signs and verifies with the current configuration's keys.
type tsigProvider struct{ s *Server }

func (p tsigProvider) Generate(msg []byte, t *dns.TSIG) ([]byte, error) {
	return nil, dns.ErrSecret
}

func (p tsigProvider) Verify(msg []byte, t *dns.TSIG) error { return dns.ErrSecret }
