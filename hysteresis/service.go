package hysteresis

import (
	"container/heap"
	"time"
)

// entry is one member of one service.
type entry struct {
	id     string
	status Status // Up or SelfDown; Gone members are deleted
	listed bool
	// requested is when the member last asked for its self-removal; zero
	// if it joined already down and so never asked.
	requested time.Time
	index     int // in the service's requests heap; -1 when not pending
}

// pending reports whether the member's self-removal has not taken effect.
func (m *entry) pending() bool { return m.index >= 0 }

// before is the FIFO order of requests.
func (m *entry) before(o *entry) bool {
	if !m.requested.Equal(o.requested) {
		return m.requested.Before(o.requested)
	}
	return m.id < o.id
}

// service is the state of one service. n, the number that sets the
// limit, is len(members): members that are up, pending or self-removed.
type service struct {
	key     string
	members map[string]*entry
	listed  int // members with listed set: up or pending
	queue   requests
	// history holds the times of the self-removals that took effect,
	// oldest first. Entries that can no longer fall in a window ending
	// now or later are pruned, so it holds at most about one window's
	// worth.
	history []time.Time
	due     time.Time // when the head of queue can take effect; valid while index >= 0
	index   int       // in the tracker's schedule; -1 when nothing is pending
}

func newService(key string) *service {
	return &service{key: key, members: make(map[string]*entry), index: -1}
}

// earliest returns the first time the request of m could take effect if
// m were at the head of the queue, given the removal times in history
// (sorted) and the number of listed members. It is the single statement
// of the rules, used both to apply requests and to estimate them:
//
//   - The window is half-open, (t-Window, t]: a removal at t0 stops
//     counting at exactly t0+Window. So the request may go once the
//     limit-th most recent removal is at least Window old.
//   - If m is the only listed member, it waits LastMemberDelay after its
//     request.
func earliest(p Policy, history []time.Time, limit, listed int, m *entry) time.Time {
	t := m.requested
	if k := len(history); k >= limit {
		t = later(t, history[k-limit].Add(p.Window))
	}
	if listed == 1 {
		t = later(t, m.requested.Add(p.LastMemberDelay))
	}
	return t
}

func later(a, b time.Time) time.Time {
	if b.After(a) {
		return b
	}
	return a
}

// prune drops removal times that no window ending at now or later can
// contain. Time never goes backwards in a Tracker, so they are dead.
func (sv *service) prune(p Policy, now time.Time) {
	i := 0
	for i < len(sv.history) && !sv.history[i].Add(p.Window).After(now) {
		i++
	}
	if i == len(sv.history) {
		sv.history = sv.history[:0]
		return
	}
	// Reslicing is amortised O(1): append reallocates to the live size
	// once the spare capacity is used up.
	sv.history = sv.history[i:]
}

// dueBy reports whether a request of sv can take effect at now. sv.due is
// kept current: every change to a service ends with apply, which
// reschedules it.
func (sv *service) dueBy(now time.Time) bool {
	return sv.index >= 0 && !sv.due.After(now)
}

// head returns the request that is served next, or nil.
func (sv *service) head() *entry {
	if len(sv.queue) == 0 {
		return nil
	}
	return sv.queue[0]
}

// dropRequest takes m out of the queue without removing it.
func (sv *service) dropRequest(m *entry) {
	if m.pending() {
		heap.Remove(&sv.queue, m.index)
	}
}
