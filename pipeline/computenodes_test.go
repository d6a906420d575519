package pipeline

import (
	"slices"
	"strings"
	"testing"

	"github.com/cnsd/cnsd/mockcloud"
	"github.com/cnsd/cnsd/store"
	"github.com/cnsd/cnsd/zonegen"
)

// cn3 is a compute node with no VMs: its CMON names are all it has.
const cn3 = "C0000003-0000-4000-8000-00000000000C"

// withEmptyNode is the rules fixture with cn3 added, its UUID in upper
// case as some CNAPI dumps have it.
func withEmptyNode() *mockcloud.Fixture {
	f := rulesFixture()
	s := f.Servers[0]
	s.UUID, s.Hostname = cn3, "cn3"
	f.Servers = append(f.Servers, s)
	return f
}

// cmonOf returns the records at compute node uuid's CMON name in zone.
func (w *world) cmonOf(uuid, zone string) []string {
	var out []string
	snap := w.store.Snapshot(zone)
	if snap == nil {
		return nil
	}
	for _, r := range snap.Lookup(strings.ToLower(uuid) + ".cmon." + zone) {
		out = append(out, r.String())
	}
	return out
}

func TestComputeNodeCMONNamesFollowCNAPI(t *testing.T) {
	s := rulesSettings()
	w := startWorld(t, withEmptyNode(), s)
	w.waitOracle(s)
	for _, zone := range []string{"pub.example.com.", "fab.example.com."} {
		want := []string{strings.ToLower(cn3) + ".cmon." + zone + "\tCNAME\tcmon." + zone}
		if got := w.cmonOf(cn3, zone); !slices.Equal(got, want) {
			t.Errorf("%s: CMON name of cn3 = %q, want %q", zone, got, want)
		}
	}
	no := false
	must[mockcloud.Server](t)(w.cloud.UpdateServer(cn3, mockcloud.ServerPatch{Setup: &no}))
	w.waitFor("cn3's CMON names to go when it is no longer set up", func() bool {
		return len(w.cmonOf(cn3, "pub.example.com.")) == 0 && len(w.cmonOf(cn3, "fab.example.com.")) == 0
	})
	w.waitOracle(s)
	yes := true
	must[mockcloud.Server](t)(w.cloud.UpdateServer(cn3, mockcloud.ServerPatch{Setup: &yes}))
	w.waitFor("cn3's CMON names to come back", func() bool { return len(w.cmonOf(cn3, "pub.example.com.")) == 1 })
	w.waitOracle(s)
	if len(w.p.Holds()) != 0 {
		t.Errorf("holds after one node changed: %+v", w.p.Holds())
	}
}

// A node that stopped being set up while no cnsd followed CNAPI is not in
// the first listing at all; its names in the store still go.
func TestComputeNodeGoneWhileStoppedLosesCMONNames(t *testing.T) {
	s := rulesSettings()
	w := newWorld(t, withEmptyNode())
	b := store.NewMemory()
	w.start(s, b)
	w.waitOracle(s)
	if len(w.cmonOf(cn3, "pub.example.com.")) != 1 {
		t.Fatalf("cn3 has no CMON name before the restart")
	}
	w.stop()
	no := false
	must[mockcloud.Server](t)(w.cloud.UpdateServer(cn3, mockcloud.ServerPatch{Setup: &no}))
	w.start(s, b)
	w.waitOracle(s)
	if src := zonegen.ComputeNodeSource(cn3); slices.Contains(w.store.Sources(), src) {
		t.Errorf("store still has source %s after the node left CNAPI's set-up list", src)
	}
}

// A change of zones moves every node's CMON names with it, without any
// change in CNAPI.
func TestComputeNodeCMONNamesFollowZones(t *testing.T) {
	s := rulesSettings()
	w := startWorld(t, withEmptyNode(), s)
	w.waitOracle(s)
	s2 := rulesSettings()
	s2.Naming.Zones = append(s2.Naming.Zones, zonegen.ZoneConfig{Name: "new.example.com", Networks: []string{"*"}})
	s2.Naming.Zones = slices.DeleteFunc(s2.Naming.Zones, func(z zonegen.ZoneConfig) bool { return z.Name == "fab.example.com" })
	w.p.SetSettings(s2)
	w.waitOracle(s2)
	if got := w.cmonOf(cn1, "new.example.com."); len(got) != 1 {
		t.Errorf("cn1 CMON name in the new zone = %q, want one CNAME", got)
	}
	for _, id := range []string{cn1, cn2, cn3} {
		if got := w.cmonOf(id, "fab.example.com."); len(got) != 0 {
			t.Errorf("%s keeps CMON name %q in a zone that was removed", id, got)
		}
	}
}
