package pipeline

import (
	"strings"
	"testing"
	"time"

	"github.com/cnsd/cnsd/hysteresis"
	"github.com/cnsd/cnsd/mockcloud"
	"github.com/cnsd/cnsd/zonegen"
)

// TestChurnWithFeedCuts cuts the changefeed 100 times while the cloud
// changes (VM states, tags, metadata, moves, creations and destructions,
// compute nodes, accounts); afterwards the store must equal the oracle
// computed from the cloud's final state. The protocol has no replay, so
// this holds only if every reconnect re-lists and removes what is gone.
func TestChurnWithFeedCuts(t *testing.T) {
	f := mockcloud.Generate(mockcloud.GenOptions{VMs: 150, Accounts: 8, Servers: 4, Seed: 11})
	s := Settings{
		Naming: zonegen.Config{UseAlias: true, UseLogin: true, Zones: []zonegen.ZoneConfig{
			{Name: "pub.example.com", Networks: []string{f.NetworkPools[0].UUID}},
			{Name: "cns.example.com", Networks: []string{"*"}},
		}},
		// Damping that never delays once the clock moves, so the final
		// state is the oracle's; the mass-deletion guard is off (share 1).
		Hysteresis:      hysteresis.Policy{Window: time.Millisecond, Divisor: 1},
		MassDeleteShare: 1,
	}
	w := startWorld(t, f, s)
	w.waitOracle(s)
	rng := mockcloud.NewRand(11)
	cuts, changes := 0, 0
	deadline := time.Now().Add(waitLimit * 4)
	step := func() {
		if time.Now().After(deadline) {
			t.Fatalf("%d cuts of 100 before the deadline: the feed does not reconnect and re-list", cuts)
		}
		w.cloud.ChurnStep(rng)
		changes++
		w.clock.Add(time.Second)
		if err := w.ldap.Sync(w.cloud); err != nil {
			t.Fatal(err)
		}
	}
	for cuts < 100 {
		step()
		listed := w.listings()
		if w.cloud.DisconnectAll() == 0 {
			continue // not reconnected yet
		}
		cuts++
		// The next cut comes once the feed has re-listed, so every cut
		// is a reconnect, a re-list and its removals, with changes made
		// while the feed was down.
		for w.listings() == listed {
			step()
		}
	}
	w.clock.Add(2 * time.Hour) // past every boot grace and hysteresis window
	w.p.Tick()
	w.waitOracle(s)
	t.Logf("%d changes, %d cuts, %d listings", changes, cuts, w.listings())
}

// listings counts the complete VM listings the feed has delivered.
func (w *world) listings() int { return strings.Count(w.logs.String(), `msg="vms listed"`) }
