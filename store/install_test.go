package store

import (
	"fmt"
	"maps"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/cnsd/cnsd/zonegen"
)

// TestVMZonesAfterMatchesInPlace: the VMs' zones made anew while Apply
// writes (vmZonesAfter) are those editing them in place gives, after
// commits that add VMs, move them between zones and take them out of
// every zone; and a commit whose Apply fails leaves them as they were.
// Each zone's VMs' records are those of their latest contributions,
// whether the zone took the plan's map (a bootstrap's) or not.
func TestVMZonesAfterMatchesInPlace(t *testing.T) {
	defer func(n int) { freshVMZones = n }(freshVMZones)
	zones := []string{"a.example.com.", "b.example.com.", "c.example.com.", "d.example.com."}
	random := func(rng *rand.Rand, vm string) zonegen.Contribution {
		recs := map[string][]Record{}
		for _, z := range zones {
			if rng.IntN(3) == 0 {
				recs[z] = []Record{a(vm+"."+z, fmt.Sprintf("10.0.0.%d", rng.IntN(9)), vm)}
			}
		}
		return contrib(vm, recs) // no zone at all: the VM leaves every zone
	}
	for seed := range uint64(40) {
		rng := rand.New(rand.NewPCG(seed, 5))
		var batches [][]zonegen.Contribution
		for i := range 4 {
			// Half the batches bring only VMs new to the Store, more
			// than it has (a bootstrap after the compute nodes).
			base := 0
			if rng.IntN(2) == 0 {
				base = 100 * (i + 1)
			}
			var batch []zonegen.Contribution
			for range 1 + rng.IntN(80) {
				batch = append(batch, random(rng, fmt.Sprintf("vm%d", base+rng.IntN(60))))
			}
			batches = append(batches, batch)
		}
		fb := &failing{Backend: NewMemory()}
		fresh, _ := open(t, fb, Options{})
		inPlace, _ := open(t, NewMemory(), Options{})
		for i, batch := range batches {
			freshVMZones = 1
			// The lists themselves, not copies: a failed Apply makes the
			// Store load its state again, but what it held must not have
			// been written meanwhile (a reader may still hold a list).
			held, before := maps.Clone(fresh.vmZones), cloneVMZones(fresh.vmZones)
			fb.set(true)
			if _, err := fresh.Commit(t.Context(), batch); err == nil {
				t.Fatalf("seed %d: a failing Apply committed", seed)
			}
			fb.set(false)
			if !maps.EqualFunc(held, before, slices.Equal) {
				t.Fatalf("seed %d batch %d: a failed commit wrote into the VMs' zone lists\n got %v\nwant %v", seed, i, held, before)
			}
			commit(t, fresh, batch...)
			freshVMZones = 1 << 30
			commit(t, inPlace, batch...)
			if !maps.EqualFunc(fresh.vmZones, inPlace.vmZones, slices.Equal) {
				t.Fatalf("seed %d batch %d: made anew %v\nin place %v", seed, i, fresh.vmZones, inPlace.vmZones)
			}
			for _, c := range latest(batch) {
				for _, z := range zones {
					want := byZone(c)[z]
					for _, s := range []*Store{fresh, inPlace} {
						if got := s.vms[z][c.VM]; !slices.Equal(got, want) {
							t.Fatalf("seed %d batch %d: %s in %s holds %v, want %v", seed, i, c.VM, z, got, want)
						}
					}
				}
			}
		}
	}
}

func cloneVMZones(m map[string][]string) map[string][]string {
	out := make(map[string][]string, len(m))
	for vm, zones := range m {
		out[vm] = slices.Clone(zones)
	}
	return out
}
