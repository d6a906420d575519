package hysteresis

import (
	"container/heap"
	"fmt"
	"slices"
	"time"
)

// Set records member's status in service at now and returns whether the
// member is listed in the service right after the call.
//
// Removals of the service that are due at now are applied first, with n
// as it was, and again after the change, so the answer is right at now
// (a SelfDown whose removal may take effect at once returns false). The
// removals Set applies are reported by the next Advance.
//
//   - Up lists the member at once and drops its pending request; an
//     unknown member joins the service listed.
//   - SelfDown asks for a self-removal at now. A member already SelfDown
//     keeps its place: a repeated report is not a new request, so a feed
//     that re-sends the VM cannot push it to the back of the queue. An
//     unknown member joins already removed: it counts in n but was never
//     listed, so there is nothing to damp.
//   - Gone removes the member from the service at once, pending or not;
//     the service is deleted, with its window, when no member is left.
//
// Set panics on a Status other than these three.
func (t *Tracker) Set(now time.Time, service, member string, s Status) (listed bool) {
	now = t.clock(now)
	sv := t.services[service]
	if sv != nil && sv.dueBy(now) {
		t.apply(sv, now)
	}
	var m *entry
	switch s {
	case Up:
		sv = t.ensure(sv, service)
		m = t.up(sv, member)
	case SelfDown:
		sv = t.ensure(sv, service)
		m = t.selfDown(sv, member, now)
	case Gone:
		if sv == nil {
			return false
		}
		t.remove(sv, member)
		if len(sv.members) == 0 {
			t.unschedule(sv)
			delete(t.services, service)
			return false
		}
		// Nothing was due before, and fewer members or fewer listed
		// ones can only make the others wait longer.
		t.reschedule(sv)
		return false
	default:
		panic(fmt.Sprintf("hysteresis: Set with invalid %v", s))
	}
	// The change may have made a request due, the member's own included.
	t.apply(sv, now)
	return m.listed
}

// Forget removes member from every service it is in, as Set with Gone in
// each: for a VM destroyed or no longer known.
func (t *Tracker) Forget(now time.Time, member string) {
	// Set edits byMember[member]; walk a copy.
	for _, key := range slices.Clone(t.byMember[member]) {
		t.Set(now, key, member, Gone)
	}
}

// ensure returns sv, creating the service if it is nil.
func (t *Tracker) ensure(sv *service, key string) *service {
	if sv == nil {
		sv = newService(key)
		t.services[key] = sv
	}
	return sv
}

// join adds a new member to sv.
func (t *Tracker) join(sv *service, id string, s Status, listed bool) *entry {
	m := &entry{id: id, status: s, listed: listed, index: -1}
	sv.members[id] = m
	t.byMember[id] = append(t.byMember[id], sv.key)
	if listed {
		sv.listed++
	}
	return m
}

func (t *Tracker) up(sv *service, id string) *entry {
	m := sv.members[id]
	if m == nil {
		return t.join(sv, id, Up, true)
	}
	sv.dropRequest(m)
	m.status, m.requested = Up, time.Time{}
	if !m.listed {
		m.listed = true
		sv.listed++
	}
	return m
}

func (t *Tracker) selfDown(sv *service, id string, now time.Time) *entry {
	m := sv.members[id]
	switch {
	case m == nil:
		return t.join(sv, id, SelfDown, false)
	case m.status == Up:
		m.status, m.requested = SelfDown, now
		heap.Push(&sv.queue, m)
	}
	return m
}

// remove deletes member id from sv at once, whatever its state.
func (t *Tracker) remove(sv *service, id string) {
	m := sv.members[id]
	if m == nil {
		return
	}
	sv.dropRequest(m)
	if m.listed {
		sv.listed--
	}
	delete(sv.members, id)
	keys := slices.DeleteFunc(t.byMember[id], func(k string) bool { return k == sv.key })
	if len(keys) == 0 {
		delete(t.byMember, id)
	} else {
		t.byMember[id] = keys
	}
}
