package hysteresis

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"
)

// t0 is the start of every scenario; steps give offsets from it.
var t0 = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)

type opKind int

const (
	opSet     opKind = iota // Set; want listed
	opAdvance               // Advance; want removed, in order
	opPending               // Pending; want pending
	opForget                // Forget
	opSize                  // len(Members); want n
)

// step is one call in a scenario. Members are written "service:member";
// removals "service:member@at" and pending entries "service:member@due",
// with times as offsets from t0.
type step struct {
	at     time.Duration
	op     opKind
	key    string // "service:member" for opSet, member for opForget, service for opSize
	status Status
	listed bool
	want   []string // opAdvance, opPending
	n      int      // opSize
}

func set(at time.Duration, key string, s Status, listed bool) step {
	return step{at: at, op: opSet, key: key, status: s, listed: listed}
}

func adv(at time.Duration, removed ...string) step {
	return step{at: at, op: opAdvance, want: removed}
}

func pend(at time.Duration, due ...string) step { return step{at: at, op: opPending, want: due} }

func forget(at time.Duration, member string) step { return step{at: at, op: opForget, key: member} }

func size(at time.Duration, svc string, n int) step { return step{at: at, op: opSize, key: svc, n: n} }

// each makes one Set step per member of svc, all expecting listed.
func each(at time.Duration, svc string, s Status, listed bool, members ...string) []step {
	var out []step
	for _, m := range members {
		out = append(out, set(at, svc+":"+m, s, listed))
	}
	return out
}

func vms(n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = fmt.Sprintf("vm%d", i+1)
	}
	return out
}

// Shorthands for scenario times.
const (
	s  = time.Second
	ns = time.Nanosecond
)

func run(t *testing.T, p Policy, steps []step) {
	t.Helper()
	tr := New(p)
	for i, st := range steps {
		now := t0.Add(st.at)
		where := fmt.Sprintf("step %d at %v", i, st.at)
		switch st.op {
		case opSet:
			svc, m, _ := strings.Cut(st.key, ":")
			if got := tr.Set(now, svc, m, st.status); got != st.listed {
				t.Fatalf("%s: Set(%s, %v) = listed %v, want %v", where, st.key, st.status, got, st.listed)
			}
			if got := tr.Listed(svc, m); got != st.listed {
				t.Fatalf("%s: Listed(%s) = %v after Set, want %v", where, st.key, got, st.listed)
			}
		case opAdvance:
			var got []string
			for _, r := range tr.Advance(now) {
				got = append(got, fmt.Sprintf("%s:%s@%v", r.Service, r.Member, r.At.Sub(t0)))
			}
			if !slices.Equal(got, st.want) {
				t.Fatalf("%s: Advance removed %q, want %q", where, got, st.want)
			}
		case opPending:
			var got []string
			for _, p := range tr.Pending(now) {
				got = append(got, fmt.Sprintf("%s:%s@%v", p.Service, p.Member, p.Due.Sub(t0)))
			}
			if !slices.Equal(got, st.want) {
				t.Fatalf("%s: Pending = %q, want %q", where, got, st.want)
			}
		case opForget:
			tr.Forget(now, st.key)
		case opSize:
			if got := len(tr.Members(st.key)); got != st.n {
				t.Fatalf("%s: %s has %d members, want %d", where, st.key, got, st.n)
			}
		}
	}
}

func TestScenarios(t *testing.T) {
	nine := vms(9)
	tests := []struct {
		name   string
		policy Policy
		steps  []step
	}{
		{"nine members down at once go 3, 3, 2, then the last at 600s", DefaultPolicy(), slices.Concat(
			each(0, "web", Up, true, nine...),
			each(0, "web", SelfDown, false, nine[:3]...), // due at once: Set applies them
			each(0, "web", SelfDown, true, nine[3:]...),
			[]step{
				adv(0, "web:vm1@0s", "web:vm2@0s", "web:vm3@0s"),
				pend(0, "web:vm4@1m0s", "web:vm5@1m0s", "web:vm6@1m0s", "web:vm7@2m0s", "web:vm8@2m0s", "web:vm9@10m0s"),
				adv(59 * s),
				adv(60*s, "web:vm4@1m0s", "web:vm5@1m0s", "web:vm6@1m0s"),
				adv(120*s, "web:vm7@2m0s", "web:vm8@2m0s"),
				adv(599 * s),
				set(599*s, "web:vm9", SelfDown, true), // still waiting
				adv(600*s, "web:vm9@10m0s"),
				size(600*s, "web", 9), // self-removed members still count
			})},
		{"hard removal in the middle is immediate and lowers n", DefaultPolicy(), slices.Concat(
			each(0, "web", Up, true, nine...),
			each(0, "web", SelfDown, false, nine[:3]...),
			each(0, "web", SelfDown, true, nine[3:]...),
			[]step{
				adv(0, "web:vm1@0s", "web:vm2@0s", "web:vm3@0s"),
				set(30*s, "web:vm4", Gone, false), // pending: gone at once
				set(30*s, "web:vm1", Gone, false), // already self-removed
				adv(30 * s),                       // hard removals are not reported
				size(30*s, "web", 7),
				// n=7: limit 2 from now on
				pend(30*s, "web:vm5@1m0s", "web:vm6@1m0s", "web:vm7@2m0s", "web:vm8@2m0s", "web:vm9@10m0s"),
				adv(60*s, "web:vm5@1m0s", "web:vm6@1m0s"),
				adv(120*s, "web:vm7@2m0s", "web:vm8@2m0s"),
				set(130*s, "web:vm9", Gone, false), // the last one may go hard
				adv(130 * s),
				pend(130 * s),
			})},
		{"return to up while pending lists again and drops the request", DefaultPolicy(), slices.Concat(
			each(0, "web", Up, true, nine...),
			each(0, "web", SelfDown, false, nine[:3]...),
			each(0, "web", SelfDown, true, nine[3:]...),
			[]step{
				adv(0, "web:vm1@0s", "web:vm2@0s", "web:vm3@0s"),
				set(30*s, "web:vm5", Up, true),
				set(30*s, "web:vm1", Up, true), // self-removed: listed at once
				pend(30*s, "web:vm4@1m0s", "web:vm6@1m0s", "web:vm7@1m0s", "web:vm8@2m0s", "web:vm9@2m0s"),
				adv(60*s, "web:vm4@1m0s", "web:vm6@1m0s", "web:vm7@1m0s"),
				// vm1 and vm5 are up, so vm9 is not the last
				adv(120*s, "web:vm8@2m0s", "web:vm9@2m0s"),
				size(120*s, "web", 9),
			})},
		{"a flapping member's place is its latest request", DefaultPolicy(), slices.Concat(
			each(0, "web", Up, true, vms(6)...), // limit 2
			each(0, "web", SelfDown, false, "vm1", "vm2"),
			[]step{
				set(0, "web:vm3", SelfDown, true),
				set(5*s, "web:vm4", SelfDown, true),
				set(10*s, "web:vm3", Up, true),
				set(15*s, "web:vm3", SelfDown, true),
				set(20*s, "web:vm3", Up, true),
				set(25*s, "web:vm3", SelfDown, true),
				set(30*s, "web:vm5", SelfDown, true),
				set(40*s, "web:vm4", SelfDown, true), // a repeat is not a new request
				set(45*s, "web:vm3", SelfDown, true),
				pend(45*s, "web:vm4@1m0s", "web:vm3@1m0s", "web:vm5@2m0s"),
				adv(60*s, "web:vm1@0s", "web:vm2@0s", "web:vm4@1m0s", "web:vm3@1m0s"),
				adv(120*s, "web:vm5@2m0s"),
			})},
		{"single member waits the last-member delay from its latest request", DefaultPolicy(), []step{
			set(0, "web:vm1", Up, true),
			set(0, "web:vm1", SelfDown, true),
			pend(0, "web:vm1@10m0s"),
			set(300*s, "web:vm1", Up, true),
			set(400*s, "web:vm1", SelfDown, true),
			adv(999 * s),
			adv(1000*s, "web:vm1@16m40s"),
			set(1000*s, "web:vm1", Up, true),
		}},
		{"two members: limit 1 and the second is the last", DefaultPolicy(), []step{
			set(0, "web:vm1", Up, true),
			set(0, "web:vm2", Up, true),
			set(0, "web:vm1", SelfDown, false),
			set(0, "web:vm2", SelfDown, true),
			pend(0, "web:vm2@10m0s"),
			adv(0, "web:vm1@0s"),
			adv(60 * s),
			adv(599 * s),
			adv(600*s, "web:vm2@10m0s"),
		}},
		{"a peer returning up saves the last member's wait", DefaultPolicy(), []step{
			set(0, "web:vm1", Up, true),
			set(0, "web:vm2", Up, true),
			set(0, "web:vm1", SelfDown, false),
			set(10*s, "web:vm2", SelfDown, true),
			pend(10*s, "web:vm2@10m10s"),
			set(300*s, "web:vm1", Up, true), // vm2 is no longer last and the window is free
			adv(300*s, "web:vm1@0s", "web:vm2@5m0s"),
			set(300*s, "web:vm2", SelfDown, false),
		}},
		{"custom policy: window 10s, divisor 2, last-member delay 30s",
			Policy{Window: 10 * s, Divisor: 2, LastMemberDelay: 30 * s}, slices.Concat(
				each(0, "web", Up, true, vms(6)...),
				each(0, "web", SelfDown, false, "vm1", "vm2", "vm3"),
				each(0, "web", SelfDown, true, "vm4", "vm5", "vm6"),
				[]step{
					pend(0, "web:vm4@10s", "web:vm5@10s", "web:vm6@30s"),
					adv(10*s, "web:vm1@0s", "web:vm2@0s", "web:vm3@0s", "web:vm4@10s", "web:vm5@10s"),
					adv(30*s, "web:vm6@30s"),
				})},
		{"divisor 1 lets every member but the last go in one window",
			Policy{Window: 60 * s, Divisor: 1, LastMemberDelay: 600 * s}, slices.Concat(
				each(0, "web", Up, true, vms(4)...),
				each(0, "web", SelfDown, false, "vm1", "vm2", "vm3"),
				each(0, "web", SelfDown, true, "vm4"),
				[]step{adv(600*s, "web:vm1@0s", "web:vm2@0s", "web:vm3@0s", "web:vm4@10m0s")})},
		{"no last-member delay and divisor 1 let a service empty at once",
			Policy{Window: 60 * s, Divisor: 1, LastMemberDelay: 0}, slices.Concat(
				each(0, "web", Up, true, vms(3)...),
				each(0, "web", SelfDown, false, vms(3)...),
				[]step{adv(0, "web:vm1@0s", "web:vm2@0s", "web:vm3@0s")})},
		{"two services are independent, even sharing a VM", DefaultPolicy(), slices.Concat(
			each(0, "web", Up, true, vms(3)...),
			each(0, "db", Up, true, vms(3)...),
			each(0, "web", SelfDown, false, "vm1"),
			each(0, "db", SelfDown, false, "vm1"),
			each(0, "web", SelfDown, true, "vm2", "vm3"),
			each(0, "db", SelfDown, true, "vm2"),
			[]step{
				pend(0, "db:vm2@1m0s", "web:vm2@1m0s", "web:vm3@10m0s"),
				adv(60*s, "web:vm1@0s", "db:vm1@0s", "db:vm2@1m0s", "web:vm2@1m0s"),
				forget(70*s, "vm3"), // gone from both at once
				size(70*s, "web", 2),
				size(70*s, "db", 2),
				pend(70 * s),
			})},
		{"members joining during a window raise n", DefaultPolicy(), slices.Concat(
			each(0, "web", Up, true, vms(3)...), // limit 1
			each(0, "web", SelfDown, false, "vm1"),
			each(0, "web", SelfDown, true, "vm2", "vm3"),
			each(10*s, "web", Up, true, "vm4", "vm5"),
			[]step{
				set(10*s, "web:vm6", Up, true), // n=6: limit 2, vm2 goes now
				adv(10*s, "web:vm1@0s", "web:vm2@10s"),
				adv(59 * s),
				adv(60*s, "web:vm3@1m0s"),
			})},
		{"a removal stops counting exactly one window later", DefaultPolicy(), slices.Concat(
			each(0, "web", Up, true, vms(6)...),
			each(0, "web", SelfDown, false, "vm1", "vm2"),
			[]step{
				set(0, "web:vm3", SelfDown, true),
				adv(60*s-ns, "web:vm1@0s", "web:vm2@0s"),
				set(60*s-ns, "web:vm3", SelfDown, true),
				adv(60*s, "web:vm3@1m0s"),
			})},
		{"a report first applies what was due, with n as it was", DefaultPolicy(), slices.Concat(
			each(0, "web", Up, true, vms(6)...), // limit 2
			each(0, "web", SelfDown, false, "vm1"),
			each(30*s, "web", SelfDown, false, "vm2"),
			[]step{
				set(30*s, "web:vm3", SelfDown, true), // due at 60s
				// No Advance at 60s: the hard removal first lets vm3
				// go under n=6; with n=5 it would wait until 90s.
				set(60*s, "web:vm4", Gone, false),
				adv(60*s, "web:vm1@0s", "web:vm2@30s", "web:vm3@1m0s"),
			})},
		{"a late Advance takes effect late, not backdated", DefaultPolicy(), slices.Concat(
			each(0, "web", Up, true, nine...),
			each(1*s, "web", SelfDown, false, "vm2", "vm3", "vm4"), // due at once
			each(1*s, "web", SelfDown, true, "vm5", "vm6", "vm7", "vm8", "vm9"),
			[]step{
				// vm5..vm7 were due at 61s; nobody called Advance until 100s
				adv(100*s, "web:vm2@1s", "web:vm3@1s", "web:vm4@1s", "web:vm5@1m40s", "web:vm6@1m40s", "web:vm7@1m40s"),
				adv(159 * s),
				adv(160*s, "web:vm8@2m40s", "web:vm9@2m40s"),
			})},
		{"a member joining already down is never listed but counts in n", DefaultPolicy(), []step{
			set(0, "web:vm1", Up, true),
			set(0, "web:vm2", Up, true),
			set(0, "web:vm3", SelfDown, false),
			size(0, "web", 3),
			adv(0),
			pend(0),
		}},
		{"gone on an unknown member creates nothing", DefaultPolicy(), []step{
			set(0, "web:vm1", Gone, false),
			size(0, "web", 0),
			set(0, "web:vm1", Up, true),
			set(1*s, "web:vm2", Gone, false),
			size(1*s, "web", 1),
		}},
		{"an emptied service forgets its window", DefaultPolicy(), []step{
			set(0, "web:vm1", Up, true),
			set(0, "web:vm2", Up, true),
			set(0, "web:vm1", SelfDown, false),
			forget(10*s, "vm1"),
			forget(10*s, "vm2"),
			size(10*s, "web", 0),
			set(20*s, "web:vm1", Up, true),
			set(20*s, "web:vm2", Up, true),
			set(20*s, "web:vm1", SelfDown, false), // a new service: no removal in its window
			adv(20*s, "web:vm1@0s", "web:vm1@20s"),
		}},
		{"time going backwards is taken as the latest time", DefaultPolicy(), []step{
			set(0, "web:vm1", Up, true),
			set(0, "web:vm2", Up, true),
			set(100*s, "web:vm1", SelfDown, false),
			set(50*s, "web:vm2", SelfDown, true), // requested at 100s, not 50s
			pend(0, "web:vm2@11m40s"),
			adv(650*s, "web:vm1@1m40s"),
			adv(699 * s),
			adv(700*s, "web:vm2@11m40s"),
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) { run(t, tc.policy, tc.steps) })
	}
}
