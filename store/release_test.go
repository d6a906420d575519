package store

import (
	"fmt"
	"testing"
	"time"

	"github.com/cnsd/cnsd/zonegen"
)

// TestReleaseAfterLargeBuild: a Store gives memory back once, after its
// first commit or load that builds at least releaseAfter records from
// nothing; not after smaller builds, nor after edits however large,
// nor after a second large build.
func TestReleaseAfterLargeBuild(t *testing.T) {
	defer func(n int, f func()) { releaseAfter, releaseMemory = n, f }(releaseAfter, releaseMemory)
	calls := 0
	releaseAfter, releaseMemory = 10, func() { calls++ }
	vms := func(zone string, from, n, gen int) []zonegen.Contribution {
		cs := make([]zonegen.Contribution, n)
		for i := range cs {
			vm := fmt.Sprintf("vm%d", from+i)
			cs[i] = contrib(vm, map[string][]Record{zone: {a(fmt.Sprintf("n%d.%s", from+i, zone), fmt.Sprintf("10.0.%d.%d", gen, i), vm)}})
		}
		return cs
	}
	want := func(step string, n int) {
		t.Helper()
		if calls != n {
			t.Fatalf("%s: memory given back %d times, want %d", step, calls, n)
		}
	}

	m := NewMemory()
	s, _ := open(t, m, Options{})
	commit(t, s, vms(zone, 0, 9, 0)...)
	want("a bootstrap of 9 records", 0)
	commit(t, s, vms(zone, 0, 9, 1)...)
	commit(t, s, append(vms(zone, 0, 9, 2), vms(zone, 9, 2, 2)...)...)
	want("edits of 9 and 11 records", 0)
	commit(t, s, vms(zone, 100, 20, 0)...)
	want("20 records added to a zone of 11, built again", 1)
	commit(t, s, vms("other.example.", 200, 30, 0)...)
	want("a second large build", 1)

	if _, err := Open(t.Context(), m, Options{}, nil); err != nil {
		t.Fatal(err)
	}
	want("a load of 61 records", 2)
	small := NewMemory()
	s2, _ := open(t, small, Options{})
	commit(t, s2, vms(zone, 0, 5, 0)...)
	if _, err := Open(t.Context(), small, Options{}, nil); err != nil {
		t.Fatal(err)
	}
	want("a commit and a load of 5 records", 2)
}

// TestReleaseAfterBatchedBuild: a large build committed by a Batcher
// gives memory back once too, after the Batcher is done with the diffs.
func TestReleaseAfterBatchedBuild(t *testing.T) {
	defer func(n int, f func()) { releaseAfter, releaseMemory = n, f }(releaseAfter, releaseMemory)
	calls := 0
	releaseAfter, releaseMemory = 10, func() { calls++ }
	s, _ := open(t, NewMemory(), Options{})
	b := NewBatcher(s, time.Hour, time.Hour, nil)
	for i := range 12 {
		vm := fmt.Sprintf("vm%d", i)
		b.Add(contrib(vm, map[string][]Record{zone: {a(vm+"."+zone, "10.0.0.1", vm)}}))
	}
	if err := b.Flush(t.Context()); err != nil {
		t.Fatal(err)
	}
	if calls != 1 || b.Commits() != 1 {
		t.Fatalf("memory given back %d times after %d commits, want once after one", calls, b.Commits())
	}
}
