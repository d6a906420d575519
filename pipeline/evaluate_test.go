package pipeline

import (
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
