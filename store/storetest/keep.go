package storetest

import (
	"context"
	"maps"
	"slices"
	"testing"
	"time"

	"github.com/cnsd/cnsd/store"
	"github.com/cnsd/cnsd/zonegen"
)

// Kept zones are a Store feature, but they rely on each backend keeping a
// zone that has a serial and no records: these cases run a Store over the
// backend under test.

var (
	keptA = zoneA + "."
	keptB = zoneB + "."
)

// openStore opens a Store over b and fails t on an error.
func openStore(t *testing.T, b store.Backend) *store.Store {
	t.Helper()
	s, err := store.Open(t.Context(), b, store.Options{}, nil)
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	return s
}

// serials returns the serial of each zone s publishes. A zone a
// follower drops between Zones and Snapshot is left out.
func serials(s *store.Store) map[string]store.Serial {
	out := map[string]store.Serial{}
	for _, z := range s.Zones() {
		if snap := s.Snapshot(z); snap != nil {
			out[z] = snap.Serial()
		}
	}
	return out
}

func mustKeep(t *testing.T, s *store.Store, zones ...string) {
	t.Helper()
	if err := s.Keep(t.Context(), zones); err != nil {
		t.Fatalf("Keep(%v): %v", zones, err)
	}
}

func testKeepCreates(t *testing.T, b store.Backend) {
	s := openStore(t, b)
	mustKeep(t, s, keptA, zoneB) // without the dot: Keep adds it
	if got := s.Zones(); !slices.Equal(got, []string{keptA, keptB}) {
		t.Fatalf("Zones after Keep = %v, want [%s %s]", got, keptA, keptB)
	}
	before := serials(s)
	for z, serial := range before {
		if snap := s.Snapshot(z); serial == 0 || snap.Len() != 0 {
			t.Errorf("kept zone %s: serial %d, %d records; want a serial and none", z, serial, snap.Len())
		}
	}
	mustKeep(t, s, keptA, keptB)
	if got := serials(s); !maps.Equal(got, before) {
		t.Errorf("Keep of existing zones changed serials: %v, was %v", got, before)
	}
	if got := serials(openStore(t, b)); !maps.Equal(got, before) {
		t.Errorf("after Open: %v, want %v", got, before)
	}
}

func testKeepEmptied(t *testing.T, b store.Backend) {
	s := openStore(t, b)
	mustKeep(t, s, keptA)
	rec := store.Record{Name: "www." + keptA, Type: zonegen.TypeA, Data: "192.0.2.1"}
	commitSource(t, s, map[string][]store.Record{keptA: {rec}, keptB: {rec}})
	full := s.Snapshot(keptA).Serial()
	commitSource(t, s, nil)
	snap := s.Snapshot(keptA)
	if snap == nil || snap.Len() != 0 || !full.Less(snap.Serial()) {
		t.Fatalf("emptied kept zone = %v, want published empty after serial %d", snap, full)
	}
	if s.Snapshot(keptB) != nil {
		t.Errorf("emptied zone %s that is not kept is still published", keptB)
	}
	if got := serials(openStore(t, b)); !maps.Equal(got, map[string]store.Serial{keptA: snap.Serial()}) {
		t.Errorf("after Open: %v, want only %s at %d", got, keptA, snap.Serial())
	}
}

func testKeepReleased(t *testing.T, b store.Backend) {
	s := openStore(t, b)
	mustKeep(t, s, keptA, keptB)
	mustKeep(t, s, keptB)
	if got := s.Zones(); !slices.Equal(got, []string{keptB}) {
		t.Fatalf("Zones after %s left the kept set = %v, want [%s]", keptA, got, keptB)
	}
	if got := openStore(t, b).Zones(); !slices.Equal(got, []string{keptB}) {
		t.Errorf("after Open: %v, want [%s]", got, keptB)
	}
}

// testKeepFollowed has a second Store follow the writer: it sees kept
// zones appear empty and go when released.
func testKeepFollowed(t *testing.T, b store.Backend) {
	f, ok := b.(store.Follower)
	if !ok {
		t.Skip("backend is not a store.Follower")
	}
	w, r := openStore(t, b), openStore(t, b)
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() { done <- r.Follow(ctx, f) }()
	defer func() {
		cancel()
		<-done
	}()
	mustKeep(t, w, keptA, keptB)
	waitSerials(t, r, serials(w))
	mustKeep(t, w, keptA)
	waitSerials(t, r, serials(w))
}

// waitSerials waits until s has exactly the zones and serials of want.
func waitSerials(t *testing.T, s *store.Store, want map[string]store.Serial) {
	t.Helper()
	deadline := time.Now().Add(waitLimit)
	for !maps.Equal(serials(s), want) {
		if time.Now().After(deadline) {
			t.Fatalf("follower at %v, want %v", serials(s), want)
		}
		time.Sleep(time.Millisecond)
	}
}

func commitSource(t *testing.T, s *store.Store, zones map[string][]store.Record) {
	t.Helper()
	if _, err := s.CommitSource(t.Context(), "storetest", zones); err != nil {
		t.Fatalf("CommitSource: %v", err)
	}
}
