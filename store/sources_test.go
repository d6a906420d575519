package store

import (
	"slices"
	"testing"
)

func TestSourcesAndContribution(t *testing.T) {
	s, _ := open(t, NewMemory(), Options{})
	vm1, vm2 := "11111111-1111-1111-1111-111111111111", "22222222-2222-2222-2222-222222222222"
	c1 := contrib(vm1, map[string][]Record{
		"a.example.": {a("x.a.example.", "192.0.2.1", vm1)},
		"b.example.": {a("x.b.example.", "192.0.2.1", vm1), a("y.b.example.", "192.0.2.1", vm1)},
	})
	c2 := contrib(vm2, map[string][]Record{"a.example.": {a("y.a.example.", "192.0.2.2", vm2)}})
	commit(t, s, c1, c2)
	if got, want := s.Sources(), []string{vm1, vm2}; !slices.Equal(got, want) {
		t.Fatalf("Sources() = %v, want %v", got, want)
	}
	got := s.Contribution(vm1)
	if len(got.Zones) != 2 || got.Zones[0].Zone != "a.example." || len(got.Zones[1].Records) != 2 {
		t.Fatalf("Contribution(vm1) = %+v, want both zones with 1 and 2 records", got)
	}
	commit(t, s, contrib(vm1, nil))
	if got, want := s.Sources(), []string{vm2}; !slices.Equal(got, want) {
		t.Fatalf("after removing vm1: Sources() = %v, want %v", got, want)
	}
	if got := s.Contribution(vm1); len(got.Zones) != 0 {
		t.Fatalf("Contribution of a removed VM = %+v, want no zones", got)
	}
}
