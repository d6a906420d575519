package xfr

import (
	"sync"
	"time"
)

// logLimiter keeps log lines caused by outside clients — refused
// transfers, bad TSIG signatures — to one per key (client, zone, reason)
// per interval, so that a misconfigured secondary retrying in a loop, or
// a scan, does not flood the log. The line after a quiet interval says
// how many like it were left out.
type logLimiter struct {
	interval time.Duration
	max      int // keys remembered; past it, the oldest half is forgotten
	now      func() time.Time

	mu   sync.Mutex
	keys map[string]*limited
}

type limited struct {
	last    time.Time // when a line was last let through
	dropped int       // lines left out since
}

func newLogLimiter(interval time.Duration, maxKeys int, now func() time.Time) *logLimiter {
	return &logLimiter{interval: interval, max: maxKeys, now: now, keys: map[string]*limited{}}
}

// allow reports whether a line for key may be logged now and, if so, how
// many were left out before it.
func (l *logLimiter) allow(key string) (ok bool, dropped int) {
	now := l.now()
	l.mu.Lock()
	defer l.mu.Unlock()
	e, seen := l.keys[key]
	if seen && now.Sub(e.last) < l.interval {
		e.dropped++
		return false, 0
	}
	if !seen {
		if len(l.keys) >= l.max {
			l.forgetOldest(now)
		}
		e = &limited{}
		l.keys[key] = e
	}
	dropped, e.last, e.dropped = e.dropped, now, 0
	return true, dropped
}

// forgetOldest drops the keys not logged for the longest time, at least
// half of them, so that many clients cannot grow the map without bound.
// Their counts of lines left out are lost, nothing else.
func (l *logLimiter) forgetOldest(now time.Time) {
	cutoff := l.interval
	for len(l.keys) > l.max/2 {
		for k, e := range l.keys {
			if now.Sub(e.last) >= cutoff {
				delete(l.keys, k)
			}
		}
		cutoff /= 2
		if cutoff <= 0 {
			clear(l.keys)
		}
	}
}

// warnClient logs a warning an outside client caused, unless one with the
// same key was logged less than clientLineInterval ago; the next one
// logged says how many were left out.
func (s *Server) warnClient(key, msg string, args ...any) {
	ok, dropped := s.clientLines.allow(key)
	if !ok {
		return
	}
	if dropped > 0 {
		args = append(args, "repeats_not_logged", dropped)
	}
	s.log.Warn(msg, args...)
}
