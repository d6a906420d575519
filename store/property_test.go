package store

import (
	"context"
	"fmt"
	"maps"
	"math/rand"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/cnsd/cnsd/zonegen"
)

// TestRandomCommits commits random contributions and checks after each
// commit that every zone serves exactly the de-duplicated union of the
// VMs' records (zonegen.Union is the oracle), that DiffSince from every
// serial the journal covers turns that serial's served set into the
// current one, and now and then that a Store reopened from the backend
// serves the same.
func TestRandomCommits(t *testing.T) {
	for seed := int64(1); seed <= 4; seed++ {
		t.Run(fmt.Sprint("seed", seed), func(t *testing.T) { randomCommits(t, seed, 300) })
	}
}

// TestRandomCommitsEveryFastPath is TestRandomCommits with every
// threshold of a large commit lowered to one, so that each commit takes
// the paths only a bootstrap takes in production: its VMs sorted into
// zones in parallel (parallelPlan), its zones' names built in parallel
// and those it fills built beside the backend's write with no journal
// entry (parallelBuild), the VMs' zones made anew (freshVMZones), memory
// released after it (releaseAfter). Over Memory, bbolt and Redis: the
// reopened Store must load what those paths wrote.
func TestRandomCommitsEveryFastPath(t *testing.T) {
	defer func(b, p, f, r int, rm func()) {
		parallelBuild, parallelPlan, freshVMZones, releaseAfter, releaseMemory = b, p, f, r, rm
	}(parallelBuild, parallelPlan, freshVMZones, releaseAfter, releaseMemory)
	parallelBuild, parallelPlan, freshVMZones, releaseAfter = 1, 1, 1, 1
	releases := 0
	releaseMemory = func() { releases++ }
	for seed := int64(1); seed <= 4; seed++ {
		t.Run(fmt.Sprint("memory,seed", seed), func(t *testing.T) { randomCommitsOver(t, seed, 300, NewMemory()) })
	}
	t.Run("bolt", func(t *testing.T) {
		randomCommitsOver(t, 5, 150, OpenBoltForTest(t, filepath.Join(t.TempDir(), "zones.db"), false))
	})
	t.Run("redis", func(t *testing.T) {
		r, _ := openTestRedis(t)
		randomCommitsOver(t, 6, 150, r)
	})
	if releases == 0 {
		t.Error("no commit released memory: releaseAfter is not what the test lowered")
	}
}

var propZones = []string{"a.test.", "b.test.", "1.10.in-addr.arpa."}

func randomContribution(rng *rand.Rand) zonegen.Contribution {
	vm := fmt.Sprintf("vm%02d", rng.Intn(12))
	c := zonegen.Contribution{VM: vm, Unresolved: rng.Intn(10) == 0}
	for i, z := range propZones {
		if rng.Intn(3) == 0 || (i == 2 && rng.Intn(4) != 0) { // the reverse zone is sparse: it comes and goes
			continue
		}
		var recs []Record
		for range rng.Intn(4) {
			name := fmt.Sprintf("n%d.%s", rng.Intn(5), z)
			recs = append(recs, Record{Name: name, Type: zonegen.TypeA, Data: fmt.Sprint("10.0.0.", rng.Intn(3)), Source: vm})
		}
		slices.SortFunc(recs, Record.Compare)
		recs = slices.Compact(recs)
		if len(recs) > 0 {
			c.Zones = append(c.Zones, zonegen.ZoneRecords{Zone: z, Records: recs})
		}
	}
	return c
}

func randomCommits(t *testing.T, seed int64, steps int) {
	randomCommitsOver(t, seed, steps, NewMemory())
}

// randomCommitsOver runs the random commits over any backend.
func randomCommitsOver(t *testing.T, seed int64, steps int, mem Backend) {
	rng := rand.New(rand.NewSource(seed))
	drops := 0
	last := map[string]Serial{} // zone → latest serial seen, kept across drops
	s, clk := open(t, mem, Options{JournalEntries: 8})
	u := zonegen.NewUnion()
	history := map[string]map[Serial][]Record{} // zone → serial → served records
	now := t0
	for step := range steps {
		now = now.Add(time.Duration(rng.Intn(25)-5) * time.Second)
		clk.Set(now)
		var batch []zonegen.Contribution
		for range 1 + rng.Intn(4) {
			c := randomContribution(rng)
			batch = append(batch, c)
		}
		commit(t, s, batch...)
		for _, c := range batch {
			u.Put(c)
		}
		for _, z := range propZones {
			if snap := s.Snapshot(z); snap != nil {
				if prev, ok := last[z]; ok && prev != snap.Serial() && !prev.Less(snap.Serial()) {
					t.Fatalf("step %d zone %s: serial went back from %d to %d", step, z, prev, snap.Serial())
				}
				last[z] = snap.Serial()
				if n, scan := snap.LargestRRset(), snap.FindLargestRRset().Records; n != scan {
					t.Fatalf("step %d zone %s: LargestRRset %d, the zone's largest RRset has %d records", step, z, n, scan)
				}
			}
			want := dedup(u.Records(z))
			if got := all(s, z); !slices.Equal(got, want) {
				t.Fatalf("step %d zone %s: served %v, want %v", step, z, got, want)
			}
			if !checkJournal(t, s, z, history) && s.dropped[z] != 0 {
				drops++
			}
		}
		if step%50 == 49 {
			r, _ := open(t, mem, Options{JournalEntries: 8})
			if d := sameAs(s, r); d != "" {
				t.Fatalf("step %d: reopened store differs: %s", step, d)
			}
		}
	}
	if drops == 0 {
		t.Errorf("no step saw a dropped zone: the test does not cover drops")
	}
	t.Logf("%d steps with a dropped zone", drops)
}

// dedup de-duplicates records sorted by Record.Compare by (name, type,
// data), keeping the smallest source as the Store does.
func dedup(recs []Record) []Record {
	return slices.CompactFunc(recs, func(x, y Record) bool { return rrCompare(x, y) == 0 })
}

// checkJournal reports whether zone z exists.
func checkJournal(t *testing.T, s *Store, z string, history map[string]map[Serial][]Record) bool {
	t.Helper()
	snap := s.Snapshot(z)
	if snap == nil {
		delete(history, z) // dropped: a comeback starts from nothing
		return false
	}
	cur := all(s, z)
	if history[z] == nil {
		history[z] = map[Serial][]Record{0: nil}
	}
	history[z][snap.Serial()] = cur
	for _, e := range snap.journal {
		from := e.from
		old, ok := history[z][from]
		if !ok {
			t.Fatalf("zone %s: journal starts at %d, a serial never published", z, from)
		}
		d, err := s.DiffSince(z, from)
		if err != nil {
			t.Fatalf("DiffSince(%s, %d): %v", z, from, err)
		}
		if got := replay(old, d); !slices.EqualFunc(got, cur, func(x, y Record) bool { return rrCompare(x, y) == 0 }) {
			t.Fatalf("zone %s: %d + DiffSince = %v, want %v", z, from, got, cur)
		}
	}
	return true
}

// replay applies a condensed diff to a served set.
func replay(set []Record, d Diff) []Record {
	out := slices.DeleteFunc(slices.Clone(set), func(r Record) bool {
		return slices.ContainsFunc(d.Removed, func(x Record) bool { return rrCompare(x, r) == 0 })
	})
	out = append(out, d.Added...)
	slices.SortFunc(out, rrCompare)
	return out
}

// TestSetSortedAgreesWithSetVMs: every change the Store gives its
// backend lists in SetSorted exactly the VMs of SetVMs, sorted, each
// with its records; both when the plan's own order is handed over (a
// batch sorted by VM that only sets VMs, as a bootstrap's) and when the
// map is sorted instead.
func TestSetSortedAgreesWithSetVMs(t *testing.T) {
	rng := rand.New(rand.NewSource(3))
	b := &setSortedChecker{Backend: NewMemory(), t: t}
	s, _ := open(t, b, Options{})
	var first []zonegen.Contribution
	for i := range 40 {
		c := randomContribution(rng)
		c.VM, c.Unresolved = fmt.Sprintf("vm%03d", i), false
		for _, z := range c.Zones {
			for k := range z.Records {
				z.Records[k].Source = c.VM
			}
		}
		first = append(first, c)
	}
	commit(t, s, first...) // sorted by VM, every VM new: the plan's order
	if b.ordered == 0 {
		t.Fatal("no change handed over its plan's order: the test does not cover it")
	}
	for range 50 {
		var batch []zonegen.Contribution
		for range 1 + rng.Intn(6) {
			batch = append(batch, randomContribution(rng))
		}
		commit(t, s, batch...)
	}
	if b.sorted == 0 {
		t.Fatal("no change sorted its map: the test does not cover it")
	}
}

// setSortedChecker checks SetSorted against SetVMs in every change it
// writes, and counts the changes that handed over their plan's order
// and those whose map was sorted.
type setSortedChecker struct {
	Backend
	t               *testing.T
	ordered, sorted int
}

func (c *setSortedChecker) Apply(ctx context.Context, epoch uint64, changes []ZoneChange) error {
	for i := range changes {
		ch := &changes[i]
		if len(ch.SetVMs) == 0 {
			continue
		}
		if ch.setOrder != nil {
			c.ordered++
		} else {
			c.sorted++
		}
		vms, recs := ch.SetSorted()
		if want := slices.Sorted(maps.Keys(ch.SetVMs)); !slices.Equal(vms, want) || len(recs) != len(vms) {
			c.t.Fatalf("zone %s: SetSorted lists %v (%d record lists), SetVMs %v", ch.Zone, vms, len(recs), want)
		}
		for k, vm := range vms {
			if !slices.Equal(recs[k], ch.SetVMs[vm]) {
				c.t.Fatalf("zone %s, %s: SetSorted gives %v, SetVMs %v", ch.Zone, vm, recs[k], ch.SetVMs[vm])
			}
		}
	}
	return c.Backend.Apply(ctx, epoch, changes)
}
