package storetest

import (
	"maps"
	"testing"
	"time"

	"github.com/cnsd/cnsd/store"
	"github.com/cnsd/cnsd/zonegen"
)

// floors reads b's floors, failing t on an error.
func floors(t *testing.T, b store.Backend) map[string]store.Serial {
	t.Helper()
	f, err := b.Floors(t.Context())
	if err != nil {
		t.Fatalf("Floors: %v", err)
	}
	return f
}

// testFloors: a drop keeps the zone's final serial as its floor, the
// latest drop's when a name is dropped again; the floor is no zone.
func testFloors(t *testing.T, b store.Backend) {
	if f := floors(t, b); len(f) != 0 {
		t.Fatalf("floors of an empty backend: %v", f)
	}
	m := model{}
	mustApply(t, b, m, m.change(zoneA, vms(zoneA, 0, 3, 0), nil, keep),
		m.change(zoneB, vms(zoneB, 0, 3, 0), nil, keep))
	mustApply(t, b, m, m.change(zoneA, vms(zoneA, 0, 1, 1), nil, keep))
	first := m[zoneA].Serial
	mustApply(t, b, m, m.drop(zoneA))
	m.check(t, b)
	if got, want := floors(t, b), map[string]store.Serial{zoneA: first}; !maps.Equal(got, want) {
		t.Fatalf("floors after the drop: %v, want %v", got, want)
	}
	// Made again above its floor, changed, and dropped again.
	again := m.change(zoneA, vms(zoneA, 4, 5, 0), nil, keep)
	again.Next = first + 10
	again.Diff.To = again.Next
	mustApply(t, b, m, again)
	mustApply(t, b, m, m.change(zoneA, vms(zoneA, 4, 5, 1), nil, keep))
	if got := floors(t, b)[zoneA]; got != first {
		t.Errorf("floor while the zone is back: %d, want %d still", got, first)
	}
	second := m[zoneA].Serial
	mustApply(t, b, m, m.drop(zoneA))
	m.check(t, b)
	if got, want := floors(t, b), map[string]store.Serial{zoneA: second}; !maps.Equal(got, want) {
		t.Fatalf("floors after the second drop: %v, want %v", got, want)
	}
}

// testFloorAfterReopen runs Stores over b: one empties a zone, which is
// dropped; a Store opened afterwards — a restart or another process
// taking the lease, with nothing of the first in memory — makes the zone
// again with a clock an hour earlier, and must still continue above the
// dropped zone's final serial.
func testFloorAfterReopen(t *testing.T, b store.Backend) {
	t0 := time.Date(2026, 11, 22, 1, 0, 0, 0, time.UTC)
	open := func(now time.Time) *store.Store {
		s, err := store.Open(t.Context(), b, store.Options{Clock: func() time.Time { return now }}, nil)
		if err != nil {
			t.Fatalf("Open: %v", err)
		}
		return s
	}
	zone := zoneA + "."
	recs := func(vm string) zonegen.Contribution {
		return zonegen.Contribution{VM: vm, Zones: []zonegen.ZoneRecords{{Zone: zone,
			Records: []store.Record{{Name: "a." + zone, Type: zonegen.TypeA, Data: "10.0.0.1", Source: vm}}}}}
	}
	first := open(t0)
	commit := func(s *store.Store, c zonegen.Contribution) {
		t.Helper()
		if _, err := s.Commit(t.Context(), []zonegen.Contribution{c}); err != nil {
			t.Fatalf("Commit: %v", err)
		}
	}
	// Several commits in one 10-second step put the serial ahead of the
	// clock, as a busy zone does.
	for range 5 {
		commit(first, recs(vmUUID(1)))
		commit(first, zonegen.Contribution{VM: vmUUID(1)})
	}
	if first.Snapshot(zone) != nil {
		t.Fatalf("the emptied zone was not dropped")
	}
	final := store.NextSerial(0, t0) + 9
	if got := floors(t, b)[zone]; got != final {
		t.Fatalf("floor %d, want the final serial %d", got, final)
	}
	second := open(t0.Add(-time.Hour))
	commit(second, recs(vmUUID(2)))
	if got := second.Snapshot(zone).Serial(); !final.Less(got) {
		t.Errorf("zone made again after reopening at serial %d, not above its final serial %d", got, final)
	}
}
