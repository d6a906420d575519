package store

import (
	"encoding/json"
	"fmt"
	"maps"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/cnsd/cnsd/mockcloud"
	"github.com/cnsd/cnsd/zonegen"
)

// vmChurn is realistic VM churn for the store's memory benchmarks: the
// VMs of a mockcloud fixture as zonegen views, generated into records the
// way the pipeline does, and changed one at a time the ways
// mockcloud's ChurnStep changes them — state, services tags, CNS status,
// alias, compute node, destruction — except that a destroyed VM is
// replaced at once by a new one on its addresses, so that the number of
// VMs, and with it what the store must hold, stays steady.
type vmChurn struct {
	rng     *rand.Rand
	gen     *zonegen.Generator
	opts    zonegen.DecideOptions
	now     time.Time
	views   []zonegen.View
	servers []*zonegen.Server
}

// churnServices are triton.cns.services values of the forms in use.
var churnServices = []string{"web:80", "web:80,web:443", "api:8080:priority=10:weight=5",
	"_http._tcp:80", "db:5432", "cache", "queue:5672,queue-admin:15672", "search:9200:weight=20"}

// newVMChurn builds the views of a generated cloud of n VMs.
func newVMChurn(tb testing.TB, n int, seed uint64) *vmChurn {
	tb.Helper()
	f := mockcloud.Generate(mockcloud.GenOptions{VMs: n, Accounts: max(n/100, 2), Servers: max(n/100, 2), Seed: seed})
	c := &vmChurn{rng: mockcloud.NewRand(seed), opts: zonegen.DefaultDecideOptions(),
		now: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC),
		gen: zonegen.NewGenerator(zonegen.Config{UseAlias: true, UseLogin: true, Zones: []zonegen.ZoneConfig{
			{Name: "pub.example.com", Networks: []string{f.NetworkPools[0].UUID}},
			{Name: "dc1.cns.example.com", Networks: []string{"*"}},
		}})}
	owners := map[string]*zonegen.Account{}
	for _, u := range f.Users {
		owners[u.UUID] = &zonegen.Account{UUID: u.UUID, Login: u.Login,
			TritonCNSEnabled:        zonegen.FlagString(u.TritonCNSEnabled),
			ApprovedForProvisioning: zonegen.FlagString(u.ApprovedForProvisioning)}
	}
	servers := map[string]*zonegen.Server{}
	for _, sv := range f.Servers {
		boot, _ := time.Parse(time.RFC3339Nano, sv.LastBoot)
		hb, _ := time.Parse(time.RFC3339Nano, sv.LastHeartbeat)
		s := &zonegen.Server{UUID: sv.UUID, Hostname: sv.Hostname, Status: sv.Status, Setup: sv.Setup, LastBoot: boot, LastHeartbeat: hb}
		servers[sv.UUID] = s
		c.servers = append(c.servers, s)
	}
	networks := map[string]zonegen.Network{}
	for _, nw := range f.Networks {
		net := zonegen.Network{UUID: nw.UUID, Name: nw.Name, OwnerUUIDs: nw.OwnerUUIDs}
		for _, p := range f.NetworkPools {
			if slices.Contains(p.Networks, nw.UUID) {
				net.Pools = append(net.Pools, p.UUID)
			}
		}
		networks[nw.UUID] = net
	}
	for _, mv := range f.VMs {
		// The feed decodes VMAPI's JSON into zonegen.VM; so does this.
		raw, err := json.Marshal(mv)
		if err != nil {
			tb.Fatal(err)
		}
		var vm zonegen.VM
		if err := json.Unmarshal(raw, &vm); err != nil {
			tb.Fatal(err)
		}
		v := zonegen.View{VM: vm, Owner: owners[mv.OwnerUUID], Server: servers[mv.ServerUUID], Networks: networks}
		if v.Owner == nil {
			v.Owner = &zonegen.Account{UUID: mv.OwnerUUID}
		}
		c.views = append(c.views, v)
	}
	return c
}

// contribution is the records of view i now.
func (c *vmChurn) contribution(i int) zonegen.Contribution {
	v := &c.views[i]
	d := zonegen.Decide(v, c.opts, c.now)
	out := c.gen.Generate(v, &d)
	for j := range out.Zones {
		out.Zones[j].Zone += "." // the pipeline makes zone names absolute
	}
	return out
}

// all is every VM's contribution: the bootstrap.
func (c *vmChurn) all() []zonegen.Contribution {
	out := make([]zonegen.Contribution, len(c.views))
	for i := range c.views {
		out[i] = c.contribution(i)
	}
	return out
}

// step makes one change, 20 ms (at 50 changes/s) after the previous one,
// and returns the contributions it changes.
func (c *vmChurn) step() []zonegen.Contribution {
	c.now = c.now.Add(time.Second / 50)
	i := c.rng.IntN(len(c.views))
	vm := &c.views[i].VM
	// Views share their maps with the fixture: change copies.
	vm.Tags = maps.Clone(vm.Tags)
	if vm.Tags == nil {
		vm.Tags = map[string]any{}
	}
	switch r := c.rng.IntN(100); {
	case r < 25:
		vm.State = map[bool]string{true: "stopped", false: "running"}[vm.State == "running"]
	case r < 45:
		if _, ok := vm.Tags["triton.cns.services"]; ok && c.rng.IntN(2) == 0 {
			delete(vm.Tags, "triton.cns.services")
		} else {
			vm.Tags["triton.cns.services"] = churnServices[c.rng.IntN(len(churnServices))]
		}
	case r < 60:
		md := maps.Clone(vm.CustomerMetadata)
		if md == nil {
			md = map[string]string{}
		}
		md["triton.cns.status"] = []string{"up", "down"}[c.rng.IntN(2)]
		vm.CustomerMetadata = md
	case r < 78:
		// Destroyed, and a new VM of the same owner takes its addresses.
		gone := c.views[i]
		gone.VM.State, gone.VM.Destroyed = "destroyed", true
		c.views[i] = gone
		dead := c.contribution(i)
		c.views[i].VM.State, c.views[i].VM.Destroyed = "running", false
		c.views[i].VM.UUID = c.uuid()
		c.views[i].VM.Alias = fmt.Sprintf("vm%d", c.rng.IntN(100000))
		return []zonegen.Contribution{dead, c.contribution(i)}
	case r < 85:
		s := c.servers[c.rng.IntN(len(c.servers))]
		vm.ServerUUID, c.views[i].Server = s.UUID, s
	default:
		vm.Alias = fmt.Sprintf("vm%d", c.rng.IntN(100000))
	}
	return []zonegen.Contribution{c.contribution(i)}
}

// uuid draws a new VM UUID.
func (c *vmChurn) uuid() string {
	return fmt.Sprintf("%08x-%04x-4%03x-8%03x-%012x", c.rng.Uint32(), c.rng.IntN(1<<16), c.rng.IntN(1<<12), c.rng.IntN(1<<12), c.rng.Uint64()&(1<<48-1))
}
