package bolt_test

import (
	"errors"
	"fmt"
	"maps"
	"path/filepath"
	"slices"
	"testing"

	"github.com/cnsd/cnsd/store"
	"github.com/cnsd/cnsd/zonegen"
)

// bulkZone is a change setting n VMs in zone from prev to next, VM 0
// with records enough to outgrow one of the buffers the VMs' values are
// cut from, and the records it sets.
func bulkZone(zone string, prev, next store.Serial, n int) store.ZoneChange {
	c := store.ZoneChange{Zone: zone, Prev: prev, Next: next, SetVMs: map[string][]store.Record{},
		Diff: store.Diff{Zone: zone, From: prev, To: next}}
	for i := range n {
		vm := fmt.Sprintf("c0000000-0000-4000-8000-%012d", i)
		count := 1 + i%3
		if i == 0 {
			count = 20_000
		}
		recs := make([]store.Record, count)
		for j := range recs {
			recs[j] = store.Record{Name: fmt.Sprintf("vm-%d.inst.u%d.%s.", i, j, zone), Type: zonegen.TypeA,
				Data: fmt.Sprintf("198.51.%d.%d", j>>8&0xff, j&0xff), Source: vm}
		}
		slices.SortFunc(recs, store.Record.Compare)
		c.SetVMs[vm] = recs
	}
	return c
}

// TestBoltBulkCommit writes a bootstrap-sized commit (zones of more VMs
// than boltBulk, encoded before the transaction in several chunks, one VM
// larger than a value buffer, beside a zone below boltBulk written in
// the transaction) and reads it back after a reopen; then an Apply that
// writes such a change and fails on another zone of the same commit
// leaves the file as it was.
func TestBoltBulkCommit(t *testing.T) {
	path := filepath.Join(t.TempDir(), "cnsd.db")
	b := openBolt(t, path)
	first := bulkZone("dc1.example.com", 0, 100, 9000)
	first.KeepJournal = 0 // a bootstrap larger than the journal's bound
	beside := []store.ZoneChange{bulkZone("pub.example.com", 0, 7, 1200), bulkZone("0.10.in-addr.arpa", 0, 7, 300)}
	if err := b.Apply(t.Context(), 1, append([]store.ZoneChange{first}, beside...)); err != nil {
		t.Fatal(err)
	}
	b.Close()

	b = openBolt(t, path)
	check := func(when string) {
		t.Helper()
		zones, err := b.Load(t.Context(), func(key string, err error) { t.Errorf("%s: %s: %v", when, key, err) })
		if err != nil {
			t.Fatalf("%s: %v", when, err)
		}
		z := zones["dc1.example.com"]
		if len(zones) != 3 || z == nil || z.Serial != 100 || len(z.Journal) != 0 {
			t.Fatalf("%s: zones %v", when, slices.Collect(maps.Keys(zones)))
		}
		for _, c := range append([]store.ZoneChange{first}, beside...) {
			if z := zones[c.Zone]; z == nil || !maps.EqualFunc(z.VMs, c.SetVMs, slices.Equal) {
				t.Errorf("%s: the VMs of %s read back differ from those written", when, c.Zone)
			}
		}
	}
	check("after reopening")

	second := bulkZone("dc1.example.com", 100, 101, 5000)
	second.KeepJournal = 1
	conflict := boltZone(5, 6) // the zone does not exist: stored serial 0
	conflict.Zone = "pub.example.com"
	for i := range conflict.Diff.Added {
		conflict.Diff.Added[i].Name = "vm-1.pub.example.com."
	}
	if err := b.Apply(t.Context(), 1, []store.ZoneChange{second, conflict}); !errors.Is(err, store.ErrConflict) {
		t.Fatalf("Apply of a bulk change and a conflicting one: %v, want ErrConflict", err)
	}
	check("after the failed bulk commit")
	b.Close()
	b = openBolt(t, path)
	defer b.Close()
	check("after the failed bulk commit and a reopen")
}
