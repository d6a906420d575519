// Package storetest is the conformance suite every store.Backend passes.
//
// Run opens a fresh, empty backend for every case and checks what Load
// returns after each Apply against a model of the expected contents. It
// requires of Apply that the change to each zone is atomic and that a zone
// whose serial is not Prev is left untouched; what happens to the other
// zones of the same Apply is not checked beyond each being atomic (the
// embedded bbolt backend writes none of them, Redis writes the zones that
// did not conflict). When the backend is also a store.Follower or a
// store.Leaser, those are checked as well. The Keep cases run a
// store.Store over the backend: kept zones rely on it holding a zone that
// has a serial and no records.
//
// storetest may import store and zonegen, and is imported only by tests.
package storetest

import (
	"errors"
	"testing"

	"github.com/cnsd/cnsd/store"
)

const (
	zoneA = "dc1.cns.example.com"
	zoneB = "pub.example.com"
	keep  = 10 // KeepJournal when a case does not test trimming
)

// Run runs the suite; open returns a new, empty backend and arranges its
// Close (and the removal of whatever it stored) with t.Cleanup.
func Run(t *testing.T, open func(t *testing.T) store.Backend) {
	tests := []struct {
		name string
		run  func(t *testing.T, b store.Backend)
	}{
		{"EmptyLoad", testEmptyLoad},
		{"NewZones", testNewZones},
		{"ReplaceAndDelete", testReplaceAndDelete},
		{"ReplaceWhole", testReplaceWhole},
		{"JournalTrim", testJournalTrim},
		{"LargeZone", testLargeZone},
		{"Conflict", testConflict},
		{"ConflictNewZone", testConflictNewZone},
		{"Fencing", testFencing},
		{"Drop", testDrop},
		{"Floors", testFloors},
		{"FloorAfterReopen", testFloorAfterReopen},
		{"FollowerSince", testFollowerSince},
		{"FollowerChanged", testFollowerChanged},
		{"Leaser", testLeaser},
		{"KeepCreates", testKeepCreates},
		{"KeepEmptied", testKeepEmptied},
		{"KeepReleased", testKeepReleased},
		{"KeepFollowed", testKeepFollowed},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) { tt.run(t, open(t)) })
	}
}

// mustApply applies changes with epoch 1, failing t on an error, and
// records them in m.
func mustApply(t *testing.T, b store.Backend, m model, changes ...store.ZoneChange) {
	t.Helper()
	if err := b.Apply(t.Context(), 1, changes); err != nil {
		t.Fatalf("Apply: %v", err)
	}
	m.apply(changes...)
}

func testEmptyLoad(t *testing.T, b store.Backend) {
	if zones := load(t, b); len(zones) != 0 {
		t.Errorf("Load of an empty backend: %d zones", len(zones))
	}
}

func testNewZones(t *testing.T, b store.Backend) {
	m := model{}
	mustApply(t, b, m, m.change(zoneA, vms(zoneA, 0, 20, 0), nil, keep),
		m.change(zoneB, vms(zoneB, 0, 5, 0), nil, keep))
	m.check(t, b)
}

func testReplaceAndDelete(t *testing.T, b store.Backend) {
	m := model{}
	mustApply(t, b, m, m.change(zoneA, vms(zoneA, 0, 10, 0), nil, keep))
	// Update VMs 0-2, add 10-11, delete 3-4; 5-9 stay as they were.
	set := vms(zoneA, 0, 3, 1)
	for vm, recs := range vms(zoneA, 10, 12, 0) {
		set[vm] = recs
	}
	mustApply(t, b, m, m.change(zoneA, set, []string{vmUUID(3), vmUUID(4)}, keep))
	m.check(t, b)
	if n := len(m[zoneA].VMs); n != 10 {
		t.Fatalf("model has %d VMs, want 10", n) // the suite's own sanity
	}
}

// testReplaceWhole writes a zone anew over what it held: VMs not in the
// change and every earlier journal entry are gone.
func testReplaceWhole(t *testing.T, b store.Backend) {
	m := model{}
	mustApply(t, b, m, m.change(zoneA, vms(zoneA, 0, 10, 0), nil, keep))
	mustApply(t, b, m, m.change(zoneA, vms(zoneA, 0, 2, 1), nil, keep))
	c := m.change(zoneA, vms(zoneA, 5, 8, 2), nil, keep)
	c.Replace = true
	c.Diff.Removed, c.Diff.Added = nil, nil
	mustApply(t, b, m, c)
	m.check(t, b)
	if z := m[zoneA]; len(z.VMs) != 3 || len(z.Journal) != 1 {
		t.Fatalf("model after replace: %d VMs, %d journal entries, want 3 and 1", len(z.VMs), len(z.Journal)) // the suite's own sanity
	}
	// It goes on from there like any zone.
	mustApply(t, b, m, m.change(zoneA, vms(zoneA, 6, 7, 3), nil, keep))
	m.check(t, b)
}

func testJournalTrim(t *testing.T, b store.Backend) {
	m := model{}
	mustApply(t, b, m, m.change(zoneA, vms(zoneA, 0, 3, 0), nil, 3))
	for v := 1; v <= 5; v++ {
		mustApply(t, b, m, m.change(zoneA, vms(zoneA, v%3, v%3+1, v), nil, 3))
		m.check(t, b)
	}
	if j := m[zoneA].Journal; len(j) != 3 || j[2].To != m[zoneA].Serial {
		t.Fatalf("model journal %v is not the last 3 diffs", j) // the suite's own sanity
	}
	// A larger bound keeps what is there and grows again.
	mustApply(t, b, m, m.change(zoneA, vms(zoneA, 0, 1, 9), nil, 5))
	m.check(t, b)
}

// testLargeZone has a journal entry far larger than any page or chunk a
// backend may use (a bootstrap diff) and trims it away.
func testLargeZone(t *testing.T, b store.Backend) {
	m := model{}
	mustApply(t, b, m, m.change(zoneA, vms(zoneA, 0, 2000, 0), nil, 2))
	m.check(t, b)
	for v := 1; v <= 3; v++ {
		mustApply(t, b, m, m.change(zoneA, vms(zoneA, v, v+1, v), nil, 2))
		m.check(t, b)
	}
}

func testConflict(t *testing.T, b store.Backend) {
	m := model{}
	mustApply(t, b, m, m.change(zoneA, vms(zoneA, 0, 5, 0), nil, keep),
		m.change(zoneB, vms(zoneB, 0, 5, 0), nil, keep))
	bad := m.change(zoneA, vms(zoneA, 0, 2, 1), []string{vmUUID(4)}, keep)
	bad.Prev += 7
	bad.Next += 7
	other := m.change(zoneB, vms(zoneB, 0, 2, 1), nil, keep)
	err := b.Apply(t.Context(), 1, []store.ZoneChange{other, bad})
	if !errors.Is(err, store.ErrConflict) {
		t.Fatalf("Apply from a wrong serial: %v, want ErrConflict", err)
	}
	zones := load(t, b)
	checkZone(t, zones[zoneA], m[zoneA])
	// zoneB is unchanged or wholly changed, depending on the backend.
	if z := zones[zoneB]; z != nil && z.Serial == other.Next {
		m.apply(other)
	}
	checkZone(t, zones[zoneB], m[zoneB])
}

func testConflictNewZone(t *testing.T, b store.Backend) {
	m := model{}
	mustApply(t, b, m, m.change(zoneA, vms(zoneA, 0, 5, 0), nil, keep))
	again := model{}.change(zoneA, vms(zoneA, 5, 6, 0), nil, keep) // Prev 0
	if err := b.Apply(t.Context(), 1, []store.ZoneChange{again}); !errors.Is(err, store.ErrConflict) {
		t.Fatalf("Apply creating an existing zone: %v, want ErrConflict", err)
	}
	late := model{}.change(zoneB, vms(zoneB, 0, 1, 0), nil, keep)
	late.Prev = 99 // the zone does not exist
	if err := b.Apply(t.Context(), 1, []store.ZoneChange{late}); !errors.Is(err, store.ErrConflict) {
		t.Fatalf("Apply to a missing zone from serial 99: %v, want ErrConflict", err)
	}
	m.check(t, b)
}

func testFencing(t *testing.T, b store.Backend) {
	m := model{}
	first := m.change(zoneA, vms(zoneA, 0, 5, 0), nil, keep)
	if err := b.Apply(t.Context(), 5, []store.ZoneChange{first}); err != nil {
		t.Fatalf("Apply with epoch 5: %v", err)
	}
	m.apply(first)
	stale := m.change(zoneA, vms(zoneA, 0, 1, 1), nil, keep)
	newZone := m.change(zoneB, vms(zoneB, 0, 1, 0), nil, keep)
	err := b.Apply(t.Context(), 4, []store.ZoneChange{stale, newZone})
	if !errors.Is(err, store.ErrFenced) {
		t.Fatalf("Apply with epoch 4 after 5: %v, want ErrFenced", err)
	}
	m.check(t, b)
	for _, epoch := range []uint64{5, 6} {
		c := m.change(zoneA, vms(zoneA, 0, 1, int(epoch)), nil, keep)
		if err := b.Apply(t.Context(), epoch, []store.ZoneChange{c}); err != nil {
			t.Fatalf("Apply with epoch %d: %v", epoch, err)
		}
		m.apply(c)
	}
	m.check(t, b)
}

func testDrop(t *testing.T, b store.Backend) {
	m := model{}
	mustApply(t, b, m, m.change(zoneA, vms(zoneA, 0, 5, 0), nil, keep),
		m.change(zoneB, vms(zoneB, 0, 5, 0), nil, keep))
	mustApply(t, b, m, m.change(zoneA, vms(zoneA, 0, 1, 1), nil, keep))
	mustApply(t, b, m, m.drop(zoneA))
	m.check(t, b)
	// A zone made again under the same name starts empty: nothing of
	// the dropped one (VMs, journal) is left to resurface.
	mustApply(t, b, m, m.change(zoneA, vms(zoneA, 7, 8, 0), nil, keep))
	m.check(t, b)
}
