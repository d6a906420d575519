package pipeline

import (
	"sync/atomic"
	"testing"

	"github.com/cnsd/cnsd/mockcloud"
	"github.com/cnsd/cnsd/zonegen"
)

// TestListingInBatches: a listing of more VMs than evaluateAll decides
// at once (some are not active: two whole batches and part of a third)
// ends with the store equal to the oracle, every batch's records
// generated and committed.
func TestListingInBatches(t *testing.T) {
	f := mockcloud.Generate(mockcloud.GenOptions{VMs: 3 * evaluateBatch, Accounts: 10, Servers: 4, Seed: 3})
	s := Settings{Naming: zonegen.Config{UseAlias: true, UseLogin: true, Zones: []zonegen.ZoneConfig{
		{Name: "pub.example.com", Networks: []string{f.NetworkPools[0].UUID}},
		{Name: "cns.example.com", Networks: []string{"*"}},
	}}}
	w := startWorld(t, f, s)
	w.waitOracle(s)
}

// TestFirstListingCollects: a first listing of at least
// collectAfterListing VMs collects the heap once, before its commit; a
// later listing does not.
func TestFirstListingCollects(t *testing.T) {
	var calls atomic.Int32
	n, c := collectAfterListing, collect
	// Registered before the world's own clean-up, so it runs after the
	// pipeline has stopped reading them.
	t.Cleanup(func() { collectAfterListing, collect = n, c })
	collectAfterListing, collect = 20, func() { calls.Add(1) }
	f := mockcloud.Generate(mockcloud.GenOptions{VMs: 40, Accounts: 4, Servers: 2, Seed: 9})
	s := Settings{Naming: zonegen.Config{Zones: []zonegen.ZoneConfig{{Name: "cns.example.com", Networks: []string{"*"}}}}}
	w := startWorld(t, f, s)
	w.waitOracle(s)
	if got := calls.Load(); got != 1 {
		t.Fatalf("%d collections after the first listing, want 1", got)
	}
	listed := w.listings()
	w.waitFor("a second listing", func() bool {
		w.cloud.DisconnectAll()
		return w.listings() > listed
	})
	w.waitOracle(s)
	if got := calls.Load(); got != 1 {
		t.Errorf("%d collections after a second listing, want still 1", got)
	}
}
