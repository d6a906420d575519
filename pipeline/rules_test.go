package pipeline

import (
	"context"
	"maps"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/cnsd/cnsd/mockcloud"
	"github.com/cnsd/cnsd/zonegen"
)

const (
	alice  = "a11ce000-0000-4000-8000-000000000001"
	bob    = "b0b00000-0000-4000-8000-000000000002"
	cn1    = "c0000001-0000-4000-8000-00000000000c"
	cn2    = "c0000002-0000-4000-8000-00000000000c"
	netExt = "e0000000-0000-4000-8000-00000000000e"
	netFab = "f0000000-0000-4000-8000-00000000000f"
	pool   = "d0000000-0000-4000-8000-00000000000d"
	web1   = "00000001-0000-4000-8000-000000000001"
	web2   = "00000002-0000-4000-8000-000000000002"
	web3   = "00000003-0000-4000-8000-000000000003"
	db1    = "00000004-0000-4000-8000-000000000004"
	bobVM  = "00000005-0000-4000-8000-000000000005"
)

// rulesFixture is a small cloud in which every rule of docs/pipeline.md (The
// decisions, Compute nodes, Self-removals) can
// be seen on a known name: alice has three web VMs (two on cn1, one on
// cn2) and a database, bob one API VM; zone pub is reached through the
// network pool, zone fab is the catch-all.
func rulesFixture() *mockcloud.Fixture {
	now := time.Now().UTC()
	boot, beat := now.Add(-48*time.Hour).Format(time.RFC3339), now.Format(time.RFC3339)
	server := func(uuid, host string) mockcloud.Server {
		return mockcloud.Server{UUID: uuid, Hostname: host, Status: "running", Setup: true, LastBoot: boot, LastHeartbeat: beat}
	}
	vm := func(uuid, alias, owner, server, ip string, tags map[string]any) mockcloud.VM {
		return mockcloud.VM{UUID: uuid, Alias: alias, OwnerUUID: owner, ServerUUID: server, State: "running",
			Brand: "joyent", CustomerMetadata: map[string]any{"triton.cns.status": "up"}, Tags: tags,
			NICs: []mockcloud.NIC{
				{Interface: "net0", MAC: "90:b8:d0:00:00:" + ip[len(ip)-2:], NICTag: "external", IP: "192.0.2." + ip, NetworkUUID: netExt},
				{Interface: "net1", MAC: "90:b8:d0:00:01:" + ip[len(ip)-2:], NICTag: "sdc_overlay", VLANID: 2, IP: "10.0.0." + ip, NetworkUUID: netFab},
			}}
	}
	web := map[string]any{"triton.cns.services": "web:80"}
	return &mockcloud.Fixture{
		Users: []mockcloud.User{
			{UUID: alice, Login: "alice", TritonCNSEnabled: "true", ApprovedForProvisioning: "true"},
			{UUID: bob, Login: "bob", TritonCNSEnabled: "true", ApprovedForProvisioning: "true"},
		},
		Servers: []mockcloud.Server{server(cn1, "cn1"), server(cn2, "cn2")},
		Networks: []mockcloud.Network{
			{UUID: netExt, Name: "external", Family: "ipv4", NICTag: "external", Subnet: "192.0.2.0/24"},
			{UUID: netFab, Name: "fab", Family: "ipv4", NICTag: "sdc_overlay", VLANID: 2, Subnet: "10.0.0.0/24",
				OwnerUUIDs: []string{alice, bob}},
		},
		NetworkPools: []mockcloud.Pool{{UUID: pool, Name: "public", Family: "ipv4", Networks: []string{netExt}}},
		VMs: []mockcloud.VM{
			vm(web1, "web1", alice, cn1, "11", web), vm(web2, "web2", alice, cn1, "12", web),
			vm(web3, "web3", alice, cn2, "13", web), vm(db1, "db1", alice, cn2, "14", nil),
			vm(bobVM, "api", bob, cn2, "15", map[string]any{"triton.cns.services": "api"}),
		},
	}
}

func rulesSettings() Settings {
	return Settings{Naming: zonegen.Config{UseAlias: true, UseLogin: true, Zones: []zonegen.ZoneConfig{
		{Name: "pub.example.com", Networks: []string{pool}},
		{Name: "fab.example.com", Networks: []string{"*"}},
	}}}
}

// addrs returns the A records' addresses at name, sorted.
func (w *world) addrs(name string) []string {
	var out []string
	for _, zone := range w.store.Zones() {
		snap := w.store.Snapshot(zone)
		if snap == nil {
			continue // dropped since Zones
		}
		for _, r := range snap.Lookup(name) {
			if r.Type == zonegen.TypeA {
				out = append(out, r.Data)
			}
		}
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// waitAddrs waits until name has exactly want (sorted) as A records.
func (w *world) waitAddrs(name string, want ...string) {
	w.t.Helper()
	w.waitFor(name+" A "+join(want), func() bool { return slices.Equal(w.addrs(name), want) })
}

func join(s []string) string {
	if len(s) == 0 {
		return "(none)"
	}
	out := s[0]
	for _, x := range s[1:] {
		out += "," + x
	}
	return out
}

// waitOracle waits until the store holds what the oracle computes from the
// cloud's current state.
func (w *world) waitOracle(s Settings) {
	w.t.Helper()
	var want map[string][]string
	w.waitFor("the store to equal the oracle", func() bool {
		want = oracle(w.t, w.cloud.Fixture(), s, w.clock.Now())
		return reflect.DeepEqual(w.records(), want)
	})
}

func must[T any](t testing.TB) func(T, error) T {
	return func(v T, err error) T {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
}

func TestRules(t *testing.T) {
	s := rulesSettings()
	w := startWorld(t, rulesFixture(), s)
	const svc = "web.svc.alice.pub.example.com."
	w.waitOracle(s)
	w.waitAddrs(svc, "192.0.2.11", "192.0.2.12", "192.0.2.13")
	w.waitAddrs("web.svc.alice.fab.example.com.", "10.0.0.11", "10.0.0.12", "10.0.0.13")
	w.waitAddrs("web1.inst.alice.pub.example.com.", "192.0.2.11")
	for _, zone := range w.store.Zones() {
		if !strings.HasSuffix(zone, ".") {
			t.Errorf("zone %q in the store is not absolute: the DNS server would not serve it", zone)
		}
	}

	w.step(t, "suffixes for a VM", func(t *testing.T) {
		got, err := w.p.Suffixes(context.Background(), alice, []string{pool, netFab})
		want := []string{"svc.alice.pub.example.com", "inst.alice.pub.example.com",
			"svc.alice.fab.example.com", "inst.alice.fab.example.com"}
		if err != nil || !slices.Equal(got, want) {
			t.Fatalf("Suffixes = %v, %v; want %v", got, err, want)
		}
		if _, err := w.p.Suffixes(context.Background(), alice, []string{"no-such-network"}); err == nil {
			t.Errorf("Suffixes with an unknown network succeeded")
		}
	})
	w.step(t, "tag added and removed", func(t *testing.T) {
		vm := must[mockcloud.VM](t)
		vm(w.cloud.SetTags(db1, map[string]any{"triton.cns.services": "db"}))
		w.waitAddrs("db.svc.alice.pub.example.com.", "192.0.2.14")
		vm(w.cloud.SetTags(db1, map[string]any{}))
		w.waitAddrs("db.svc.alice.pub.example.com.")
	})
	w.step(t, "status down is damped", func(t *testing.T) {
		setStatus(t, w, web1, "down") // 1 of 3 may go in a window: at once
		w.waitAddrs(svc, "192.0.2.12", "192.0.2.13")
		setStatus(t, w, web2, "down") // the window is used up
		w.settle()
		w.clock.Add(59 * time.Second)
		w.p.Tick()
		w.settle()
		if got := w.addrs(svc); !slices.Equal(got, []string{"192.0.2.12", "192.0.2.13"}) {
			t.Fatalf("59 s after the first removal %s = %v, want web2 still listed", svc, got)
		}
		w.clock.Add(2 * time.Second)
		w.p.Tick()
		w.waitAddrs(svc, "192.0.2.13")
		setStatus(t, w, web3, "down") // the last listed member waits 600 s
		w.settle()
		pending := w.p.Pending()
		if len(pending) != 1 || pending[0].VM != web3 || pending[0].Due.Sub(pending[0].Requested) != 600*time.Second {
			t.Fatalf("Pending() = %+v, want web3 due 600 s after its request", pending)
		}
		w.clock.Add(599 * time.Second)
		w.p.Tick()
		w.settle()
		if got := w.addrs(svc); !slices.Equal(got, []string{"192.0.2.13"}) {
			t.Fatalf("599 s after the last member went down %s = %v, want it still listed", svc, got)
		}
		w.clock.Add(time.Second)
		w.p.Tick()
		w.waitAddrs(svc)
		w.waitAddrs("web3.inst.alice.pub.example.com.", "192.0.2.13") // the instance stays
	})
	w.step(t, "status up returns at once", func(t *testing.T) {
		for _, id := range []string{web1, web2, web3} {
			setStatus(t, w, id, "up")
		}
		w.waitAddrs(svc, "192.0.2.11", "192.0.2.12", "192.0.2.13")
	})
	w.step(t, "stopped VM leaves services at once", func(t *testing.T) {
		vm := must[mockcloud.VM](t)
		vm(w.cloud.SetState(web1, "stopped"))
		w.waitAddrs(svc, "192.0.2.12", "192.0.2.13")
		w.waitAddrs("web1.inst.alice.pub.example.com.", "192.0.2.11")
		vm(w.cloud.SetState(web1, "running"))
		w.waitAddrs(svc, "192.0.2.11", "192.0.2.12", "192.0.2.13")
	})
	w.step(t, "compute node down", func(t *testing.T) {
		down, old := "unknown", w.clock.Now().Add(-2*time.Hour).UTC().Format(time.RFC3339)
		must[mockcloud.Server](t)(w.cloud.UpdateServer(cn2, mockcloud.ServerPatch{Status: &down, LastHeartbeat: &old}))
		w.waitAddrs(svc, "192.0.2.11", "192.0.2.12")
		w.waitAddrs("web3.inst.alice.pub.example.com.", "192.0.2.13")
		up, now := "running", w.clock.Now().UTC().Format(time.RFC3339)
		must[mockcloud.Server](t)(w.cloud.UpdateServer(cn2, mockcloud.ServerPatch{Status: &up, LastHeartbeat: &now}))
		w.waitAddrs(svc, "192.0.2.11", "192.0.2.12", "192.0.2.13")
	})
	w.step(t, "disable tag", func(t *testing.T) {
		vm := must[mockcloud.VM](t)
		vm(w.cloud.SetTags(web2, map[string]any{"triton.cns.services": "web:80", "triton.cns.disable": "yes"}))
		w.waitAddrs(svc, "192.0.2.11", "192.0.2.13")
		w.waitAddrs("web2.inst.alice.pub.example.com.")
		vm(w.cloud.SetTags(web2, map[string]any{"triton.cns.services": "web:80", "triton.cns.disable": false}))
		w.waitAddrs(svc, "192.0.2.11", "192.0.2.12", "192.0.2.13")
	})
	w.step(t, "login change", func(t *testing.T) {
		updateUser(t, w, alice, mockcloud.UserPatch{Login: ptr("alice2")})
		w.waitAddrs("web.svc.alice2.pub.example.com.", "192.0.2.11", "192.0.2.12", "192.0.2.13")
		w.waitAddrs(svc)
	})
	w.step(t, "account disabled", func(t *testing.T) {
		updateUser(t, w, alice, mockcloud.UserPatch{TritonCNSEnabled: ptr("false")})
		w.waitAddrs("web.svc.alice2.pub.example.com.")
		w.waitAddrs("web1.inst.alice2.pub.example.com.")
		w.waitAddrs("api.svc.bob.pub.example.com.", "192.0.2.15")
	})
	w.step(t, "destroyed", func(t *testing.T) {
		vm := must[mockcloud.VM](t)
		vm(w.cloud.DestroyVM(bobVM))
		w.waitAddrs("api.svc.bob.pub.example.com.")
		w.waitAddrs("api.inst.bob.fab.example.com.")
	})
	w.waitOracle(s)
	if len(w.p.Holds()) != 0 {
		t.Errorf("holds after single changes: %+v", w.p.Holds())
	}
}

func setStatus(t *testing.T, w *world, uuid, status string) {
	t.Helper()
	cur, ok := w.cloud.VM(uuid)
	if !ok {
		t.Fatalf("no VM %s", uuid)
	}
	md := maps.Clone(cur.CustomerMetadata)
	md["triton.cns.status"] = status
	must[mockcloud.VM](t)(w.cloud.SetCustomerMetadata(uuid, md))
	w.waitFor(uuid+" seen with status "+status, func() bool {
		st, ok := w.p.VM(uuid)
		return ok && st.VM.CustomerMetadata["triton.cns.status"] == status && w.p.Idle()
	})
}

func updateUser(t *testing.T, w *world, uuid string, p mockcloud.UserPatch) {
	t.Helper()
	must[mockcloud.User](t)(w.cloud.UpdateUser(uuid, p))
	if err := w.ldap.Sync(w.cloud); err != nil {
		t.Fatal(err)
	}
}

func ptr(s string) *string { return &s }
