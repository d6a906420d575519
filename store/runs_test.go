package store

import (
	"fmt"
	"slices"
	"testing"

	"github.com/cnsd/cnsd/zonegen"
)

// TestRuns checks that Runs yields All's records, a name's records at
// once, over a tree of several levels (more names than treeFanout²),
// and stops when asked to.
func TestRuns(t *testing.T) {
	s, _ := open(t, NewMemory(), Options{})
	var recs []Record
	for i := range treeFanout*treeFanout + 100 {
		name := fmt.Sprintf("h%d.g%d.%s", i, i%7, zone)
		recs = append(recs, a(name, fmt.Sprintf("10.0.%d.%d", i>>8, i&255), "vm1"))
		if i%3 == 0 {
			recs = append(recs, Record{Name: name, Type: zonegen.TypeTXT, Data: fmt.Sprintf(`"%d"`, i), Source: "vm1"},
				a(name, "192.0.2.1", "vm1"))
		}
	}
	commit(t, s, contrib("vm1", map[string][]Record{zone: recs}))
	snap := s.Snapshot(zone)
	all := slices.Collect(snap.All())
	var got []Record
	names := map[string]bool{}
	for run := range snap.Runs() {
		if len(run) == 0 {
			t.Fatal("an empty run")
		}
		if names[run[0].Name] {
			t.Fatalf("%s in two runs", run[0].Name)
		}
		names[run[0].Name] = true
		for _, r := range run {
			if r.Name != run[0].Name {
				t.Fatalf("a run holds %s and %s", run[0].Name, r.Name)
			}
		}
		got = append(got, run...)
	}
	if !slices.Equal(got, all) || len(all) != len(recs) {
		t.Errorf("Runs gave %d records, All %d, committed %d; or in another order", len(got), len(all), len(recs))
	}
	n := 0
	for range snap.Runs() {
		if n++; n == treeFanout+3 {
			break
		}
	}
	if n != treeFanout+3 {
		t.Errorf("stopped after %d runs, want %d", n, treeFanout+3)
	}
	for range emptySnapshot(zone, 1).Runs() {
		t.Error("an empty snapshot yields a run")
	}
}
