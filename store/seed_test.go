package store

import (
	"testing"
)

// TestSeedFloors: a fresh store seeded with the serials its secondaries
// hold makes each zone above them, within one RFC 1982 step: one past a
// secondary ahead of the clock (however far ahead), the time-based serial
// when that is later; a zone the store holds, or a floor already later,
// is left alone.
func TestSeedFloors(t *testing.T) {
	ts := TimeSerial(t0)
	tests := []struct {
		name   string
		held   bool // the store holds the zone before the seed
		floor  Serial
		taken  bool
		serial func(held Serial) Serial // the serial of the next commit
	}{
		{name: "secondary ahead of the clock", floor: ts + 1000, taken: true,
			serial: func(Serial) Serial { return ts + 1001 }},
		{name: "secondary far ahead", floor: ts + 1<<31 - 10, taken: true,
			serial: func(Serial) Serial { return ts + 1<<31 - 9 }},
		{name: "secondary just behind the clock", floor: ts - 5, taken: true,
			serial: func(Serial) Serial { return ts }},
		{name: "secondary behind the clock", floor: 12345, taken: true,
			serial: func(Serial) Serial { return ts }},
		{name: "zone held already", held: true, floor: ts + 1000,
			serial: func(held Serial) Serial { return held + 1 }},
	}
	const zone = "example.com."
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, _ := open(t, NewMemory(), Options{})
			if !s.Fresh() {
				t.Fatal("a new store is not fresh")
			}
			var held Serial
			if tt.held {
				commit(t, s, contrib("vm1", map[string][]Record{zone: {a("a."+zone, "192.0.2.1", "vm1")}}))
				held = s.Snapshot(zone).Serial()
				if s.Fresh() {
					t.Fatal("a store holding a zone is fresh")
				}
			}
			taken := s.SeedFloors(map[string]Serial{zone: tt.floor})
			if _, ok := taken[zone]; ok != tt.taken {
				t.Fatalf("SeedFloors took %v, want taken %v", taken, tt.taken)
			}
			commit(t, s, contrib("vm2", map[string][]Record{zone: {a("b."+zone, "192.0.2.2", "vm2")}}))
			got := s.Snapshot(zone).Serial()
			if want := tt.serial(held); got != want {
				t.Fatalf("serial %d, want %d", got, want)
			}
			if tt.taken && !tt.floor.Less(got) {
				t.Fatalf("serial %d not above the secondary's %d (RFC 1982)", got, tt.floor)
			}
		})
	}
	t.Run("a later floor is kept", func(t *testing.T) {
		s, _ := open(t, NewMemory(), Options{})
		s.SeedFloors(map[string]Serial{zone: ts + 100})
		if taken := s.SeedFloors(map[string]Serial{zone: ts + 50}); len(taken) != 0 {
			t.Fatalf("an earlier floor was taken: %v", taken)
		}
		if s.Fresh() {
			t.Fatal("a store with floors is fresh")
		}
		commit(t, s, contrib("vm1", map[string][]Record{zone: {a("a."+zone, "192.0.2.1", "vm1")}}))
		if got := s.Snapshot(zone).Serial(); got != ts+101 {
			t.Fatalf("serial %d, want %d", got, ts+101)
		}
	})
}
