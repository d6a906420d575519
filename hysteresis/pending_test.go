package hysteresis

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
	"time"
)

// nineDown returns a tracker with the nine-member example set up at t0 and
// its three immediate removals already reported.
func nineDown(t *testing.T) *Tracker {
	t.Helper()
	tr := New(DefaultPolicy())
	for _, m := range vms(9) {
		tr.Set(t0, "web", m, Up)
	}
	for _, m := range vms(9) {
		tr.Set(t0, "web", m, SelfDown)
	}
	if d, ok := tr.NextDue(t0); !ok || !d.Equal(t0) {
		t.Fatalf("NextDue with unreported removals = %v, %v; want t0, true", d.Sub(t0), ok)
	}
	if got := len(tr.Advance(t0)); got != 3 {
		t.Fatalf("Advance(0) reported %d removals, want 3", got)
	}
	return tr
}

func TestPendingAndNextDue(t *testing.T) {
	tests := []struct {
		name    string
		advance []time.Duration // Advance at these offsets first
		now     time.Duration
		pending []string // member@due
		next    time.Duration
		none    bool // NextDue reports nothing
	}{
		{name: "right after the first three", now: 0,
			pending: []string{"vm4@1m0s", "vm5@1m0s", "vm6@1m0s", "vm7@2m0s", "vm8@2m0s", "vm9@10m0s"}, next: 60 * s},
		{name: "mid-window estimates do not move", now: 30 * s,
			pending: []string{"vm4@1m0s", "vm5@1m0s", "vm6@1m0s", "vm7@2m0s", "vm8@2m0s", "vm9@10m0s"}, next: 60 * s},
		{name: "overdue requests are due now and push the rest", now: 100 * s,
			pending: []string{"vm4@1m40s", "vm5@1m40s", "vm6@1m40s", "vm7@2m40s", "vm8@2m40s", "vm9@10m0s"}, next: 100 * s},
		{name: "after the second batch", advance: []time.Duration{60 * s}, now: 60 * s,
			pending: []string{"vm7@2m0s", "vm8@2m0s", "vm9@10m0s"}, next: 120 * s},
		{name: "only the last member is left", advance: []time.Duration{60 * s, 120 * s}, now: 121 * s,
			pending: []string{"vm9@10m0s"}, next: 600 * s},
		{name: "nothing left", advance: []time.Duration{60 * s, 120 * s, 600 * s}, now: 600 * s, none: true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			tr := nineDown(t)
			for _, at := range tc.advance {
				tr.Advance(t0.Add(at))
			}
			now := t0.Add(tc.now)
			var got []string
			for _, p := range tr.Pending(now) {
				if p.Service != "web" || !p.Requested.Equal(t0) {
					t.Errorf("pending %+v: want service web requested at t0", p)
				}
				got = append(got, fmt.Sprintf("%s@%v", p.Member, p.Due.Sub(t0)))
			}
			if !slices.Equal(got, tc.pending) {
				t.Errorf("Pending = %q, want %q", got, tc.pending)
			}
			d, ok := tr.NextDue(now)
			switch {
			case tc.none && ok:
				t.Errorf("NextDue = %v, want none", d.Sub(t0))
			case !tc.none && (!ok || d.Sub(t0) != tc.next):
				t.Errorf("NextDue = %v, %v; want %v", d.Sub(t0), ok, tc.next)
			}
		})
	}
}

func TestNextDueEmpty(t *testing.T) {
	tr := New(DefaultPolicy())
	if _, ok := tr.NextDue(t0); ok {
		t.Error("NextDue on an empty tracker reports something")
	}
	tr.Set(t0, "web", "vm1", Up)
	if _, ok := tr.NextDue(t0); ok {
		t.Error("NextDue with no request reports something")
	}
}

// TestPendingMatchesAdvance builds random queues, then drives Advance at
// each NextDue with no further reports: every request must take effect
// exactly at the Due that Pending estimated.
func TestPendingMatchesAdvance(t *testing.T) {
	for seed := range uint64(40) {
		t.Run(fmt.Sprint(seed), func(t *testing.T) {
			r := rand.New(rand.NewPCG(seed, 7))
			tr := New(randomPolicy(r))
			now := randomQueues(r, tr)
			tr.Advance(now)
			want := map[string]time.Time{}
			for _, p := range tr.Pending(now) {
				want[p.Service+":"+p.Member] = p.Due
			}
			for d, ok := tr.NextDue(now); ok; d, ok = tr.NextDue(now) {
				now = d
				rs := tr.Advance(now)
				if len(rs) == 0 {
					t.Fatalf("Advance at NextDue %v applied nothing", now.Sub(t0))
				}
				for _, r := range rs {
					key := r.Service + ":" + r.Member
					if due, ok := want[key]; !ok || !due.Equal(r.At) {
						t.Fatalf("%s removed at %v, Pending estimated %v (known %v)", key, r.At.Sub(t0), due.Sub(t0), ok)
					}
					delete(want, key)
				}
			}
			if len(want) > 0 {
				t.Fatalf("estimated removals never applied: %v", want)
			}
		})
	}
}

// randomQueues makes random reports to tr over three services and returns
// the time of the last one. At the end most listed members ask to go, so
// that queues run down to their last member.
func randomQueues(r *rand.Rand, tr *Tracker) time.Time {
	now := t0
	for range 200 {
		now = now.Add(time.Duration(r.IntN(20)) * s)
		svc, m := fmt.Sprintf("svc%d", r.IntN(3)), fmt.Sprintf("vm%d", r.IntN(15))
		tr.Set(now, svc, m, []Status{Up, Up, SelfDown, SelfDown, Gone}[r.IntN(5)])
	}
	for _, svc := range []string{"svc0", "svc1", "svc2"} {
		for _, m := range tr.Members(svc) {
			if m.Listed && r.IntN(4) > 0 {
				now = now.Add(time.Duration(r.IntN(3)) * s)
				tr.Set(now, svc, m.ID, SelfDown)
			}
		}
	}
	return now
}
