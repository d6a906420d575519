package hysteresis

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
	"time"
)

func randomPolicy(r *rand.Rand) Policy {
	return Policy{
		Window:          []time.Duration{10 * s, 30 * s, 60 * s}[r.IntN(3)],
		Divisor:         1 + r.IntN(4),
		LastMemberDelay: []time.Duration{0, 45 * s, 600 * s}[r.IntN(3)],
	}
}

// model is the test's own view of a service, kept from what the caller
// did and what the tracker reported, to check the tracker against.
type model struct {
	members  map[string]*modelMember
	removals []time.Time // self-removals that took effect, in order
}

type modelMember struct {
	status    Status
	listed    bool
	requested time.Time
}

func (m *model) listed() int {
	n := 0
	for _, mm := range m.members {
		if mm.listed {
			n++
		}
	}
	return n
}

// checker drives a tracker with random operations and checks invariants.
//
// It also makes every call on a second tracker, lazy, that is never
// advanced before an operation, only after it: its Set must apply what was
// due with n as it was, so both must agree on every result.
type checker struct {
	t        *testing.T
	r        *rand.Rand
	p        Policy
	tr, lazy *Tracker
	now      time.Time
	services map[string]*model
	step     []string // removals reported by tr in this step
}

func TestProperties(t *testing.T) {
	for seed := range uint64(40) {
		t.Run(fmt.Sprint(seed), func(t *testing.T) {
			r := rand.New(rand.NewPCG(seed, 1))
			p := randomPolicy(r)
			c := &checker{t: t, r: r, p: p, tr: New(p), lazy: New(p), now: t0, services: map[string]*model{}}
			for i := range 1000 {
				c.run(i)
			}
		})
	}
}

func (c *checker) run(i int) {
	c.step = c.step[:0]
	c.now = c.now.Add([]time.Duration{0, 0, s, 5 * s, c.p.Window / 2, c.p.Window}[c.r.IntN(6)])
	if c.r.IntN(8) == 0 {
		c.jump()
	}
	// Everything due before the operation is applied with n as it was,
	// so every removal below is checked against the n it was applied at.
	c.removed(c.tr.Advance(c.now))
	svc := fmt.Sprintf("svc%d", c.r.IntN(3))
	member := fmt.Sprintf("vm%d", c.r.IntN(12))
	switch op := c.r.IntN(20); {
	case op < 9:
		c.set(svc, member, SelfDown)
	case op < 16:
		c.set(svc, member, Up)
	case op < 19:
		c.set(svc, member, Gone)
	default:
		c.tr.Forget(c.now, member)
		c.lazy.Forget(c.now, member)
		for key := range c.services {
			c.gone(key, member)
		}
		c.removed(c.tr.Advance(c.now))
	}
	c.compare(i)
	c.compareLazy(i)
}

// jump moves to the next due time: nothing may happen just before it and
// something must happen at it.
func (c *checker) jump() {
	d, ok := c.tr.NextDue(c.now)
	if !ok {
		return
	}
	if d.After(c.now) {
		if rs := c.tr.Advance(d.Add(-1)); len(rs) > 0 {
			c.t.Fatalf("at %v, before NextDue %v: removed %v", d.Add(-1).Sub(t0), d.Sub(t0), rs)
		}
		c.now = d
	}
	rs := c.tr.Advance(c.now)
	if len(rs) == 0 {
		c.t.Fatalf("Advance at NextDue %v removed nothing", d.Sub(t0))
	}
	c.removed(rs)
}

func (c *checker) set(key, member string, s Status) {
	listed := c.tr.Set(c.now, key, member, s)
	if lazy := c.lazy.Set(c.now, key, member, s); lazy != listed {
		c.t.Fatalf("at %v Set(%s, %s, %v) = %v, without Advance first %v", c.now.Sub(t0), key, member, s, listed, lazy)
	}
	svc := c.services[key]
	switch s {
	case Gone:
		c.gone(key, member)
		if listed {
			c.t.Fatalf("Set(%s, %s, Gone) left it listed", key, member)
		}
	case Up:
		if svc == nil {
			svc = &model{members: map[string]*modelMember{}}
			c.services[key] = svc
		}
		svc.members[member] = &modelMember{status: Up, listed: true}
	case SelfDown:
		if svc == nil {
			svc = &model{members: map[string]*modelMember{}}
			c.services[key] = svc
		}
		switch mm := svc.members[member]; {
		case mm == nil:
			svc.members[member] = &modelMember{status: SelfDown}
		case mm.status == Up:
			mm.status, mm.requested = SelfDown, c.now
		}
	}
	// What Set applied is reported now; with it the model must agree
	// with what Set returned.
	c.removed(c.tr.Advance(c.now))
	if want := c.isListed(key, member); listed != want {
		c.t.Fatalf("at %v Set(%s, %s, %v) = %v, model says %v", c.now.Sub(t0), key, member, s, listed, want)
	}
}

func (c *checker) gone(key, member string) {
	if svc := c.services[key]; svc != nil {
		delete(svc.members, member)
		if len(svc.members) == 0 {
			delete(c.services, key) // the tracker forgets its window too
		}
	}
}

func (c *checker) isListed(key, member string) bool {
	svc := c.services[key]
	return svc != nil && svc.members[member] != nil && svc.members[member].listed
}

// removed checks each reported self-removal against the invariants and
// applies it to the model.
func (c *checker) removed(rs []Removal) {
	for _, r := range rs {
		svc := c.services[r.Service]
		if svc == nil || svc.members[r.Member] == nil {
			c.t.Fatalf("removal of a non-member: %+v", r)
		}
		mm := svc.members[r.Member]
		if !r.At.Equal(c.now) || mm.status != SelfDown || !mm.listed || !mm.requested.Equal(r.Requested) {
			c.t.Fatalf("at %v: removal %+v of member %+v", c.now.Sub(t0), r, *mm)
		}
		for id, o := range svc.members {
			if o != mm && o.status == SelfDown && o.listed && (o.requested.Before(mm.requested) ||
				o.requested.Equal(mm.requested) && id < r.Member) {
				c.t.Fatalf("at %v: %s removed before %s, which asked first", c.now.Sub(t0), r.Member, id)
			}
		}
		c.step = append(c.step, fmt.Sprintf("%s:%s@%v", r.Service, r.Member, r.At.Sub(t0)))
		mm.listed = false
		svc.removals = append(svc.removals, r.At)
		inWindow := 0
		for _, at := range svc.removals {
			if at.After(r.At.Add(-c.p.Window)) {
				inWindow++
			}
		}
		// The limit is computed here, not with Policy.Limit, so that a
		// wrong Limit cannot hide itself.
		n := len(svc.members)
		if limit := max(n/c.p.Divisor, 1); inWindow > limit {
			c.t.Fatalf("at %v: %d self-removals from %s in one window, limit %d for n=%d",
				r.At.Sub(t0), inWindow, r.Service, limit, n)
		}
		if svc.listed() == 0 && r.At.Before(r.Requested.Add(c.p.LastMemberDelay)) {
			c.t.Fatalf("at %v: last member %s of %s removed %v after asking", r.At.Sub(t0), r.Member, r.Service, r.At.Sub(r.Requested))
		}
	}
}

// compare checks the tracker's members, pending requests and schedule
// against the model.
func (c *checker) compare(i int) {
	pending := 0
	for key, svc := range c.services {
		got := c.tr.Members(key)
		if len(got) != len(svc.members) {
			c.t.Fatalf("step %d: %s has %d members, model %d", i, key, len(got), len(svc.members))
		}
		for _, m := range got {
			mm := svc.members[m.ID]
			if mm == nil || mm.status != m.Status || mm.listed != m.Listed {
				c.t.Fatalf("step %d: %s member %+v, model %+v", i, key, m, mm)
			}
			if m.Status == SelfDown && m.Listed {
				pending++
			}
		}
	}
	if got := len(c.tr.Pending(c.now)); got != pending {
		c.t.Fatalf("step %d: %d pending, model %d", i, got, pending)
	}
	d, ok := c.tr.NextDue(c.now)
	if ok != (pending > 0) || ok && !d.After(c.now) {
		c.t.Fatalf("step %d: NextDue = %v, %v with %d pending: something due was not applied", i, d.Sub(t0), ok, pending)
	}
}

// compareLazy checks that the lazy tracker, advanced only after the
// operation, reported the same removals in this step and holds the same
// members.
func (c *checker) compareLazy(i int) {
	var got []string
	for _, r := range c.lazy.Advance(c.now) {
		got = append(got, fmt.Sprintf("%s:%s@%v", r.Service, r.Member, r.At.Sub(t0)))
	}
	slices.Sort(got)
	slices.Sort(c.step)
	if !slices.Equal(got, c.step) {
		c.t.Fatalf("step %d: removals %q, without Advance first %q", i, c.step, got)
	}
	for key := range c.services {
		if a, b := c.tr.Members(key), c.lazy.Members(key); !slices.Equal(a, b) {
			c.t.Fatalf("step %d: %s members %+v, without Advance first %+v", i, key, a, b)
		}
	}
}
