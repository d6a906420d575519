package pipeline

import (
	"slices"
	"testing"
	"time"

	"github.com/cnsd/cnsd/mockcloud"
	"github.com/cnsd/cnsd/zonegen"
)

// oracle computes the records of every VM and compute node of f directly, without the
// feeds, the pipeline or the store: the decisions at now and the record
// generator over the cloud's own objects, with no damping. It returns the
// same shape as world.records.
func oracle(t testing.TB, f *mockcloud.Fixture, s Settings, now time.Time) map[string][]string {
	t.Helper()
	out := map[string][]string{}
	for _, zones := range oracleSources(t, f, s, now) {
		for zone, recs := range zones {
			out[zone] = append(out[zone], recs...)
		}
	}
	for zone := range out {
		slices.Sort(out[zone])
		out[zone] = slices.Compact(out[zone])
	}
	return out
}

// oracleSources is oracle per source (VM UUID or compute node's
// zonegen.ComputeNodeSource): zone → its records, sorted. A source with
// no records is absent.
func oracleSources(t testing.TB, f *mockcloud.Fixture, s Settings, now time.Time) map[string]map[string][]string {
	t.Helper()
	s = withDefaults(s)
	gen := zonegen.NewGenerator(s.Naming)
	users := map[string]zonegen.Account{}
	for _, u := range f.Users {
		users[u.UUID] = zonegen.Account{UUID: u.UUID, Login: u.Login,
			TritonCNSEnabled:        zonegen.FlagString(u.TritonCNSEnabled),
			ApprovedForProvisioning: zonegen.FlagString(u.ApprovedForProvisioning)}
	}
	servers := map[string]zonegen.Server{}
	for _, sv := range f.Servers {
		servers[sv.UUID] = zonegen.Server{UUID: sv.UUID, Hostname: sv.Hostname, Status: sv.Status, Setup: sv.Setup,
			LastBoot: parseTime(sv.LastBoot), LastHeartbeat: parseTime(sv.LastHeartbeat)}
	}
	networks := map[string]zonegen.Network{}
	for _, n := range f.Networks {
		net := zonegen.Network{UUID: n.UUID, Name: n.Name, OwnerUUIDs: n.OwnerUUIDs}
		for _, p := range f.NetworkPools {
			if slices.Contains(p.Networks, n.UUID) {
				net.Pools = append(net.Pools, p.UUID)
			}
		}
		networks[n.UUID] = net
	}
	out := map[string]map[string][]string{}
	add := func(c zonegen.Contribution) {
		absoluteZones(&c)
		for _, z := range c.Zones {
			for _, r := range z.Records {
				if out[c.VM] == nil {
					out[c.VM] = map[string][]string{}
				}
				out[c.VM][z.Zone] = append(out[c.VM][z.Zone], r.String())
			}
		}
		for zone, recs := range out[c.VM] {
			slices.Sort(recs)
			out[c.VM][zone] = slices.Compact(recs)
		}
	}
	for _, mv := range f.VMs {
		v := zonegen.View{VM: toVM(t, mv), Networks: networks}
		if u, ok := users[mv.OwnerUUID]; ok {
			v.Owner = &u
		} else {
			v.Owner = &zonegen.Account{UUID: mv.OwnerUUID}
		}
		if sv, ok := servers[mv.ServerUUID]; ok {
			v.Server = &sv
		}
		d := zonegen.Decide(&v, s.Decide, now)
		add(gen.Generate(&v, &d))
	}
	for id, sv := range servers {
		add(gen.ComputeNode(id, &sv))
	}
	return out
}

func parseTime(s string) time.Time {
	t, _ := time.Parse(time.RFC3339Nano, s)
	return t
}
