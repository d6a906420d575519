package hysteresis

import (
	"container/heap"
	"time"
)

// apply lets every request of sv that is due at now take effect, in FIFO
// order, then reschedules sv. The limit uses n as it is now.
func (t *Tracker) apply(sv *service, now time.Time) {
	sv.prune(t.policy, now)
	limit := t.policy.Limit(len(sv.members))
	for m := sv.head(); m != nil; m = sv.head() {
		if earliest(t.policy, sv.history, limit, sv.listed, m).After(now) {
			// FIFO: a later request never overtakes the head. The
			// head waits only for the window, which holds for all,
			// or for the last-member delay, and then it is alone.
			break
		}
		heap.Pop(&sv.queue)
		m.listed = false
		sv.listed--
		sv.history = append(sv.history, now)
		t.applied = append(t.applied, Removal{Service: sv.key, Member: m.id, Requested: m.requested, At: now})
	}
	t.reschedule(sv)
}

// reschedule files sv in the schedule under the time its head request can
// take effect, or takes it out if nothing is pending.
func (t *Tracker) reschedule(sv *service) {
	m := sv.head()
	if m == nil {
		t.unschedule(sv)
		return
	}
	sv.due = earliest(t.policy, sv.history, t.policy.Limit(len(sv.members)), sv.listed, m)
	if sv.index < 0 {
		heap.Push(&t.scheduled, sv)
	} else {
		heap.Fix(&t.scheduled, sv.index)
	}
}

func (t *Tracker) unschedule(sv *service) {
	if sv.index >= 0 {
		heap.Remove(&t.scheduled, sv.index)
	}
}
