package hysteresis

import (
	"cmp"
	"slices"
	"strings"
	"time"
)

// Pending is a self-removal that has not taken effect yet.
type Pending struct {
	Service   string
	Member    string
	Requested time.Time // when the member asked
	// Due is the earliest time, not before the now given to
	// [Tracker.Pending], at which the removal can take effect if nothing
	// changes meanwhile and Advance runs then: an estimate, since later
	// reports change n and the queue.
	Due time.Time
}

// Pending lists the self-removals not yet applied, ordered by Due, then
// service, then FIFO order. It changes nothing. Within a service the
// estimate replays the rules over the queue: for 9 members that all
// asked at 0 with the default policy, the 4th to 6th are due at 60 s, the
// 7th and 8th at 120 s and the 9th, the last listed member, at 600 s.
func (t *Tracker) Pending(now time.Time) []Pending {
	now = later(now, t.last)
	var out []Pending
	for _, sv := range t.scheduled {
		out = t.estimate(sv, now, out)
	}
	slices.SortFunc(out, func(a, b Pending) int {
		return cmp.Or(a.Due.Compare(b.Due), strings.Compare(a.Service, b.Service),
			a.Requested.Compare(b.Requested), strings.Compare(a.Member, b.Member))
	})
	return out
}

// estimate appends the due times of sv's requests to out by simulating
// the queue: each request in FIFO order goes at the earliest time the
// rules allow, no sooner than now or the one before it, and then counts
// in the window and no longer as listed.
func (t *Tracker) estimate(sv *service, now time.Time, out []Pending) []Pending {
	queue := slices.Clone(sv.queue)
	slices.SortFunc(queue, func(a, b *entry) int {
		return cmp.Or(a.requested.Compare(b.requested), strings.Compare(a.id, b.id))
	})
	// Clip so that appending the simulated removals never writes into
	// the service's own history.
	history := slices.Clip(sv.history)
	limit := t.policy.Limit(len(sv.members))
	listed, at := sv.listed, now
	for _, m := range queue {
		at = later(at, earliest(t.policy, history, limit, listed, m))
		history = append(history, at)
		listed--
		out = append(out, Pending{Service: sv.key, Member: m.id, Requested: m.requested, Due: at})
	}
	return out
}
