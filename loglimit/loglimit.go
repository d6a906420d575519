// Package loglimit keeps log lines that repeat — a client retrying in a
// loop, a VM whose lookup fails on every retry, a malformed entry seen on
// every listing — to one per key per interval; the next line let through
// says how many like it were left out.
//
// It is a leaf: it imports the standard library only, so that every
// package that logs may use it.
//
//	warn := loglimit.New(time.Minute, 10_000, nil)
//	warn.Warn(log, "nic/"+vm, "nic cannot be repaired", "vm", vm, "err", err)
package loglimit

import (
	"context"
	"log/slog"
	"sync"
	"time"
)

// Limiter lets one line per key through per interval. Safe for
// concurrent use.
type Limiter struct {
	interval time.Duration
	max      int // keys remembered; past it, the oldest half is forgotten
	now      func() time.Time

	mu   sync.Mutex // guards keys
	keys map[string]*limited
}

type limited struct {
	last    time.Time // when a line was last let through
	dropped int       // lines left out since
}

// New returns a Limiter that lets one line per key through per interval
// and remembers at most maxKeys keys (the ones logged longest ago are
// forgotten first, with their counts). A nil now is time.Now.
func New(interval time.Duration, maxKeys int, now func() time.Time) *Limiter {
	if now == nil {
		now = time.Now
	}
	return &Limiter{interval: interval, max: max(maxKeys, 1), now: now, keys: map[string]*limited{}}
}

// Allow reports whether a line for key may be logged now and, if so, how
// many were left out before it.
func (l *Limiter) Allow(key string) (ok bool, dropped int) {
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
			l.forgetOldestLocked(now)
		}
		e = &limited{}
		l.keys[key] = e
	}
	dropped, e.last, e.dropped = e.dropped, now, 0
	return true, dropped
}

// Len returns how many keys the Limiter remembers.
func (l *Limiter) Len() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.keys)
}

// forgetOldestLocked drops the keys not logged for the longest time, at
// least half of them, so that many keys cannot grow the map without
// bound. Their counts of lines left out are lost, nothing else.
func (l *Limiter) forgetOldestLocked(now time.Time) {
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

// Warn logs msg with args at level Warn on log, unless a line with the
// same key was let through less than the interval ago; a line that
// follows left-out ones says how many with "repeats_not_logged".
func (l *Limiter) Warn(log *slog.Logger, key, msg string, args ...any) {
	l.Log(log, slog.LevelWarn, key, msg, args...)
}

// Log is Warn at any level.
func (l *Limiter) Log(log *slog.Logger, level slog.Level, key, msg string, args ...any) {
	if !log.Enabled(context.Background(), level) {
		return
	}
	ok, dropped := l.Allow(key)
	if !ok {
		return
	}
	if dropped > 0 {
		args = append(args, "repeats_not_logged", dropped)
	}
	log.Log(context.Background(), level, msg, args...)
}
