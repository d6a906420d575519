package main

import (
	"context"
	"sync"
	"sync/atomic"

	"github.com/cnsd/cnsd/store"
	"github.com/cnsd/cnsd/xfr"
)

// source is the store the DNS server and the API read: a following
// store while another process holds the writer lease, then this
// process's writing store; nil until the zones are first loaded. Readers
// keep their own watch channels across the switch.
type source struct {
	cur atomic.Pointer[store.Store]
	// writer is the store this process writes with, once it holds the
	// lease; nil before.
	writer atomic.Pointer[store.Store]

	mu       sync.Mutex
	watchers []chan struct{}
}

var _ xfr.Raiser = (*source)(nil)

// Snapshot returns zone's snapshot; nil before the zones are loaded
// (Redis down at start), so that DNS answers as for an unknown zone.
func (s *source) Snapshot(zone string) *store.Snapshot {
	if st := s.cur.Load(); st != nil {
		return st.Snapshot(zone)
	}
	return nil
}

// Zones lists the zones; none before they are loaded.
func (s *source) Zones() []string {
	if st := s.cur.Load(); st != nil {
		return st.Zones()
	}
	return nil
}

// Watch returns a channel that signals (coalesced) after any change of
// the current store, and after a switch.
func (s *source) Watch() <-chan struct{} {
	ch := make(chan struct{}, 1)
	s.mu.Lock()
	s.watchers = append(s.watchers, ch)
	s.mu.Unlock()
	return ch
}

func (s *source) signal() {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, ch := range s.watchers {
		select {
		case ch <- struct{}{}:
		default:
		}
	}
}

// follow makes st the current store before it returns, and passes its
// changes on until ctx ends, in a goroutine of its own; the channel is
// closed when that goroutine has ended. The switch is made by the caller,
// not by that goroutine: a goroutine of the store followed before the
// lease, scheduled late, would otherwise put that store back over the
// writer's after a quick takeover, and the DNS server and the API would
// serve the follower's zones, no longer followed, from then on.
func (s *source) follow(ctx context.Context, st *store.Store) <-chan struct{} {
	changed := st.Watch()
	s.cur.Store(st)
	s.signal()
	done := make(chan struct{})
	go func() {
		defer close(done)
		defer st.Unwatch(changed)
		for {
			select {
			case <-ctx.Done():
				return
			case <-changed:
				s.signal()
			}
		}
	}()
	return done
}

// RaiseSerial raises a zone's serial past a secondary's with the writing
// store; a process that does not hold the writer lease must not write:
// its following store tells the writer through Redis (store.ErrHinted),
// and before the zones are loaded it gets store.ErrFollowing.
func (s *source) RaiseSerial(ctx context.Context, zone string, above store.Serial) (store.Serial, bool, error) {
	if w := s.writer.Load(); w != nil {
		return w.RaiseSerial(ctx, zone, above)
	}
	if cur := s.cur.Load(); cur != nil {
		return 0, false, cur.AskWriterToRaise(ctx, zone, above)
	}
	return 0, false, store.ErrFollowing
}
