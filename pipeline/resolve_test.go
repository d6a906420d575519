package pipeline

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/cnsd/cnsd/logtest"
	"github.com/cnsd/cnsd/store"
	"github.com/cnsd/cnsd/zonegen"
)

// downOwners is a UFDS that is down: every lookup fails after a while,
// and some accounts are cached from before.
type downOwners struct {
	cached map[string]zonegen.Account
	asked  int
}

func (o *downOwners) User(ctx context.Context, uuid string) (zonegen.Account, error) {
	o.asked++
	return zonegen.Account{}, errors.New("ldap: i/o timeout")
}

func (o *downOwners) Cached(uuid string) (zonegen.Account, bool) {
	a, ok := o.cached[uuid]
	return a, ok
}

type noServers struct{}

func (noServers) Server(string) (zonegen.Server, bool) { return zonegen.Server{}, false }

type noNetworks struct{}

func (noNetworks) Network(context.Context, string) (zonegen.Network, error) {
	return zonegen.Network{}, errors.New("not asked")
}

func (noNetworks) RepairNIC(_ context.Context, _ string, nic zonegen.NIC) (zonegen.NIC, error) {
	return nic, nil
}

// TestOwnerOutageAsksOnce: in one pass over many VMs of different owners
// while UFDS is down, UFDS is asked once; the other owners come from the
// client's cache or stay unresolved without a wait each.
func TestOwnerOutageAsksOnce(t *testing.T) {
	st, err := store.Open(context.Background(), store.NewMemory(), store.Options{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	owners := &downOwners{cached: map[string]zonegen.Account{}}
	p := New(Config{Store: st, Owners: owners, Servers: noServers{}, Networks: noNetworks{}})
	var vms []*vmState
	for i := range 10 {
		owner := fmt.Sprintf("0000000%d-0000-4000-8000-00000000000%d", i, i)
		if i%2 == 1 {
			owners.cached[owner] = zonegen.Account{UUID: owner, Login: fmt.Sprint("user", i), TritonCNSEnabled: "true", ApprovedForProvisioning: "true"}
		}
		vms = append(vms, p.put(zonegen.VM{UUID: fmt.Sprintf("1000000%d-0000-4000-8000-00000000000%d", i, i), OwnerUUID: owner, State: "running"}))
	}
	cs := p.evaluateAll(context.Background(), vms, time.Now(), "", nil)
	if owners.asked != 1 {
		t.Errorf("UFDS asked %d times in one pass, want once", owners.asked)
	}
	if len(cs) != 5 { // the VMs of the cached owners 1, 3, 5, 7 and 9
		t.Errorf("%d VMs resolved, want the 5 whose owners were cached", len(cs))
	}
}

// brokenNICs is a NAPI that cannot repair any NIC.
type brokenNICs struct{ noNetworks }

func (brokenNICs) RepairNIC(_ context.Context, _ string, nic zonegen.NIC) (zonegen.NIC, error) {
	return nic, errors.New("repair nic: napi: 503 Service Unavailable")
}

// TestNICWarningRateLimited: a VM whose NIC cannot be repaired is retried
// on every pass; the warning saying so is logged once a minute, the next
// one counting the repeats left out.
func TestNICWarningRateLimited(t *testing.T) {
	st, err := store.Open(context.Background(), store.NewMemory(), store.Options{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	now := time.Date(2026, 11, 23, 12, 0, 0, 0, time.UTC)
	var logs logtest.Buffer
	owner := "00000001-0000-4000-8000-000000000001"
	owners := &downOwners{cached: map[string]zonegen.Account{owner: {UUID: owner, Login: "alice"}}}
	p := New(Config{Store: st, Owners: owners, Servers: noServers{}, Networks: brokenNICs{},
		Clock: func() time.Time { return now }, Logger: slog.New(slog.NewTextHandler(&logs, nil))})
	const vm = "10000001-0000-4000-8000-000000000001"
	state := p.put(zonegen.VM{UUID: vm, Alias: "web1", OwnerUUID: owner, State: "running",
		NICs: []zonegen.NIC{{MAC: "90:b8:d0:00:00:01", IP: "192.0.2.1"}}})
	for range 6 { // one retry every 10 s for a minute
		if _, ok := p.evaluate(context.Background(), state, now, newLookups()); ok {
			t.Fatal("a VM whose NIC cannot be repaired resolved")
		}
		now = now.Add(10 * time.Second)
	}
	p.evaluate(context.Background(), state, now, newLookups())
	lines := logs.Lines("cannot be repaired from NAPI", "vm="+vm, "alias=web1", "503 Service Unavailable")
	if len(lines) != 2 {
		t.Fatalf("%d warnings in a minute and 7 retries, want 2:\n%s", len(lines), logs.String())
	}
	if !strings.Contains(lines[1], "repeats_not_logged=5") {
		t.Errorf("the second warning does not count the 5 left out: %s", lines[1])
	}
}

// someNetworks is a NAPI that knows the networks of names, fails
// "down", and repairs the NIC with MAC repairMAC onto network "r"
// (failing the others).
type someNetworks struct {
	names     map[string]string
	asked     []string
	deadlines []time.Duration // left on the context of each request
	repairMAC string
}

func (n *someNetworks) Network(ctx context.Context, uuid string) (zonegen.Network, error) {
	n.asked = append(n.asked, uuid)
	if d, ok := ctx.Deadline(); ok {
		n.deadlines = append(n.deadlines, time.Until(d))
	}
	name, ok := n.names[uuid]
	if !ok {
		return zonegen.Network{}, errors.New("napi: 503")
	}
	return zonegen.Network{UUID: uuid, Name: name}, nil
}

func (n *someNetworks) RepairNIC(_ context.Context, _ string, nic zonegen.NIC) (zonegen.NIC, error) {
	if nic.MAC != n.repairMAC {
		return nic, errors.New("napi: 503")
	}
	nic.NetworkUUID, nic.IP = "r", "192.0.2.9"
	return nic, nil
}

// TestResolveNetworks: a view describes each network of the VM's
// publishable NICs that was looked up, once, whatever their number;
// views on the same networks may share their map; the lookups not in the
// memo run under the VM's deadline; a NIC that cannot be repaired leaves
// the networks found before it in the view; the VM's NICs are never
// written, repaired or not.
func TestResolveNetworks(t *testing.T) {
	nets := &someNetworks{names: map[string]string{"a": "A", "b": "B", "c": "C", "r": "R"}, repairMAC: "m-r"}
	owner := "00000001-0000-4000-8000-000000000001"
	owners := &downOwners{cached: map[string]zonegen.Account{owner: {UUID: owner, Login: "alice"}}}
	r := &resolver{owners: owners, servers: noServers{}, networks: nets, timeout: time.Minute, log: slog.New(slog.DiscardHandler)}
	nic := func(net string) zonegen.NIC {
		return zonegen.NIC{MAC: "m-" + net, IP: "192.0.2.1", NetworkUUID: net, NICTag: "external"}
	}
	admin := zonegen.NIC{MAC: "m-admin", IP: "10.0.0.1", NetworkUUID: "adm", NICTag: "admin"}
	memo := newLookups()
	for _, tc := range []struct {
		name   string
		nics   []zonegen.NIC
		want   []string // the networks the view describes, sorted
		reason bool     // unresolved: a NIC could not be repaired
	}{
		{"none", nil, nil, false},
		{"admin only", []zonegen.NIC{admin}, nil, false},
		{"one", []zonegen.NIC{nic("a")}, []string{"a"}, false},
		{"one again", []zonegen.NIC{admin, nic("a")}, []string{"a"}, false},
		{"two", []zonegen.NIC{nic("a"), nic("b")}, []string{"a", "b"}, false},
		{"two, other order", []zonegen.NIC{nic("b"), nic("a")}, []string{"a", "b"}, false},
		{"repeated", []zonegen.NIC{nic("a"), nic("a"), nic("b")}, []string{"a", "b"}, false},
		{"three", []zonegen.NIC{nic("a"), nic("b"), nic("c")}, []string{"a", "b", "c"}, false},
		{"four with a repeat", []zonegen.NIC{nic("c"), nic("b"), nic("a"), nic("c"), nic("b")}, []string{"a", "b", "c"}, false},
		{"one down", []zonegen.NIC{nic("a"), nic("down")}, []string{"a"}, false},
		{"repaired", []zonegen.NIC{{MAC: "m-r"}, nic("a")}, []string{"a", "r"}, false},
		{"repaired second", []zonegen.NIC{nic("a"), {MAC: "m-r"}, {MAC: "m-r"}}, []string{"a", "r"}, false},
		{"not repairable", []zonegen.NIC{nic("a"), {MAC: "m-x"}, nic("b")}, []string{"a"}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			given := slices.Clone(tc.nics)
			v, why := r.resolve(context.Background(), zonegen.VM{UUID: "10000001-0000-4000-8000-000000000001", OwnerUUID: owner, NICs: tc.nics}, memo)
			if !reflect.DeepEqual(tc.nics, given) {
				t.Errorf("resolve changed the VM's NICs: %+v, were %+v", tc.nics, given)
			}
			var got []string
			for id, net := range v.Networks {
				got = append(got, id)
				if !reflect.DeepEqual(net, memo.networks[id].val) {
					t.Errorf("network %s: %+v, the memo has %+v", id, net, memo.networks[id].val)
				}
			}
			slices.Sort(got)
			if !slices.Equal(got, tc.want) || (why != nil) != tc.reason {
				t.Errorf("view describes %q (reason %v), want %q (reason %v)", got, why, tc.want, tc.reason)
			}
		})
	}
	if want := []string{"a", "b", "c", "down", "r"}; !slices.Equal(nets.asked, want) {
		t.Errorf("NAPI asked for %q, want each once: %q", nets.asked, want)
	}
	for _, d := range nets.deadlines {
		if d <= 0 || d > time.Minute {
			t.Errorf("a lookup ran with %v left, want under the VM's minute", d)
		}
	}
	if len(nets.deadlines) != len(nets.asked) {
		t.Errorf("%d of %d lookups had a deadline", len(nets.deadlines), len(nets.asked))
	}
}
