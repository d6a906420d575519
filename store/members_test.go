package store

import (
	"context"
	"fmt"
	"hash/fnv"
	"math/rand"
	"slices"
	"sort"
	"testing"

	"github.com/cnsd/cnsd/zonegen"
)

// published returns the addresses svcName publishes in st.
func published(st *Store) []string {
	var out []string
	for _, r := range st.Snapshot(bigZone).Lookup(svcName) {
		out = append(out, r.Data)
	}
	slices.Sort(out)
	return out
}

// lowestRanked is what the cap must publish out of members 0..n-1 (by
// their addresses): the max with the lowest FNV-1a of "uuid name",
// computed here apart from the Store's code.
func lowestRanked(members []int, max int) []string {
	type m struct {
		rank uint64
		addr string
	}
	var ms []m
	for _, i := range members {
		c := member(i)
		h := fnv.New64a()
		fmt.Fprintf(h, "%s %s", c.VM, svcName)
		ms = append(ms, m{h.Sum64(), c.Zones[0].Records[0].Data})
	}
	sort.Slice(ms, func(a, b int) bool { return ms[a].rank < ms[b].rank })
	var out []string
	for _, x := range ms[:max] {
		out = append(out, x.addr)
	}
	slices.Sort(out)
	return out
}

// TestMaxMembers: with MaxMembers 50, a service of 180 members
// publishes the 50 members of lowest rank, the same set whatever order
// and batches the members arrive in; the others' instance names stay.
// A member outside the 50 leaving changes nothing published; one inside
// leaving is replaced by the next-ranked member and nothing else. A
// store reopened from the backend and a follower publish the same.
func TestMaxMembers(t *testing.T) {
	const max = 50
	all := make([]int, 180)
	for i := range all {
		all[i] = i
	}
	want := lowestRanked(all, max)
	var first *Store
	var mem *Memory
	for seed := int64(1); seed <= 4; seed++ {
		rng := rand.New(rand.NewSource(seed))
		order := slices.Clone(all)
		rng.Shuffle(len(order), func(i, j int) { order[i], order[j] = order[j], order[i] })
		b := NewMemory()
		st, _ := open(t, b, Options{MaxMembers: max})
		for len(order) > 0 {
			n := min(len(order), 1+rng.Intn(40))
			var cs []zonegen.Contribution
			for _, i := range order[:n] {
				cs = append(cs, member(i))
			}
			commit(t, st, cs...)
			order = order[n:]
		}
		if got := published(st); !slices.Equal(got, want) {
			t.Fatalf("order %d publishes %d members %v, want %v", seed, len(got), got, want)
		}
		if n := st.Snapshot(bigZone).Len(); n != 180+max {
			t.Fatalf("order %d: %d records, want 180 instance names and %d members", seed, n, max)
		}
		if first == nil {
			first, mem = st, b
		}
	}

	st := first
	f, _ := open(t, mem, Options{MaxMembers: max})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- f.Follow(ctx, mem) }()
	t.Cleanup(func() {
		cancel()
		<-done
	})
	isPublished := func(i int) bool {
		return slices.Contains(want, member(i).Zones[0].Records[0].Data)
	}
	out, in := slices.IndexFunc(all, func(i int) bool { return !isPublished(i) }), slices.IndexFunc(all, isPublished)

	diffs := commit(t, st, zonegen.Contribution{VM: member(out).VM})
	for _, d := range diffs {
		for _, r := range append(d.Removed, d.Added...) {
			if r.Name == svcName {
				t.Errorf("member %d, not published, left and changed the service: %v", out, d)
			}
		}
	}
	rest := slices.DeleteFunc(slices.Clone(all), func(i int) bool { return i == out })
	if got := published(st); !slices.Equal(got, want) {
		t.Fatalf("after an unpublished member left: %v, want %v", got, want)
	}

	diffs = commit(t, st, zonegen.Contribution{VM: member(in).VM})
	rest = slices.DeleteFunc(rest, func(i int) bool { return i == in })
	want2 := lowestRanked(rest, max)
	if got := published(st); !slices.Equal(got, want2) {
		t.Fatalf("after a published member left: %v, want %v", got, want2)
	}
	var svcChanges []string
	for _, d := range diffs {
		for _, r := range d.Removed {
			if r.Name == svcName {
				svcChanges = append(svcChanges, "-"+r.Data)
			}
		}
		for _, r := range d.Added {
			if r.Name == svcName {
				svcChanges = append(svcChanges, "+"+r.Data)
			}
		}
	}
	if len(svcChanges) != 2 {
		t.Errorf("a published member leaving changed the service by %v, want its address out and the next-ranked in", svcChanges)
	}

	reopened, _ := open(t, mem, Options{MaxMembers: max})
	if got := published(reopened); !slices.Equal(got, want2) {
		t.Errorf("reopened store publishes %v, want %v", got, want2)
	}
	waitSame(t, st, f)
	if got := published(f); !slices.Equal(got, want2) {
		t.Errorf("follower publishes %v, want %v", got, want2)
	}
}
