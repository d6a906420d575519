package hysteresis

import (
	"fmt"
	"math/rand/v2"
	"testing"
	"time"
)

// flapper is a service of members with a precomputed random sequence of
// reports, so that the benchmark loop measures the tracker, not rand.
type flapper struct {
	services, members []string
	ops               []flapOp
}

type flapOp struct {
	svc, member int
	status      Status
}

func newFlapper(nsvc, nmem int) *flapper {
	f := &flapper{services: make([]string, nsvc), members: make([]string, nmem)}
	for i := range f.services {
		f.services[i] = fmt.Sprintf("a0000000-0000-4000-8000-%012d/web", i)
	}
	for i := range f.members {
		f.members[i] = fmt.Sprintf("c0000000-0000-4000-8000-%012d", i)
	}
	r := rand.New(rand.NewPCG(1, 2))
	f.ops = make([]flapOp, 1<<16)
	for i := range f.ops {
		s := Up
		if r.IntN(5) < 2 {
			s = SelfDown
		}
		f.ops[i] = flapOp{svc: r.IntN(nsvc), member: r.IntN(nmem), status: s}
	}
	return f
}

// BenchmarkSet flaps members of a service of 1000 (and of 100 such
// services, 100k VMs): 40% of reports are down, 60% up, one every 10 ms.
func BenchmarkSet(b *testing.B) {
	for _, nsvc := range []int{1, 100} {
		b.Run(fmt.Sprintf("services=%d/members=1000", nsvc), func(b *testing.B) {
			f := newFlapper(nsvc, 1000)
			tr := New(DefaultPolicy())
			now := t0
			for _, svc := range f.services {
				for _, m := range f.members {
					tr.Set(now, svc, m, Up)
				}
			}
			b.ReportAllocs()
			i := 0
			for b.Loop() {
				op := f.ops[i%len(f.ops)]
				now = now.Add(10 * time.Millisecond)
				tr.Set(now, f.services[op.svc], f.members[op.member], op.status)
				if i%1024 == 0 {
					tr.Advance(now) // drain the report list as a caller would
				}
				i++
			}
		})
	}
}

// BenchmarkAdvance has 100 services of 1000 members all asking to go;
// each Advance is one window later and removes a third of each service,
// who then ask again (untimed), so every call does a full batch: 33,300
// removals.
func BenchmarkAdvance(b *testing.B) {
	f := newFlapper(100, 1000)
	p := DefaultPolicy()
	tr := New(p)
	now := t0
	for _, svc := range f.services {
		for _, m := range f.members {
			tr.Set(now, svc, m, Up)
		}
	}
	now = now.Add(p.Window)
	for _, svc := range f.services {
		for _, m := range f.members {
			tr.Set(now, svc, m, SelfDown)
		}
	}
	tr.Advance(now)
	b.ReportAllocs()
	removed := 0
	for b.Loop() {
		now = now.Add(p.Window)
		rs := tr.Advance(now)
		removed += len(rs)
		b.StopTimer()
		for _, r := range rs {
			tr.Set(now, r.Service, r.Member, Up)
			tr.Set(now, r.Service, r.Member, SelfDown)
		}
		b.StartTimer()
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(max(removed, 1)), "ns/removal")
}
