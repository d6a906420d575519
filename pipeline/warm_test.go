package pipeline

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"sync"
	"testing"
	"time"

	"github.com/cnsd/cnsd/store"
	"github.com/cnsd/cnsd/zonegen"
)

// countingOwners is a UFDS that counts the lookups of each account; down,
// every lookup fails and only cached accounts are known.
type countingOwners struct {
	mu     sync.Mutex
	asked  map[string]int
	down   bool
	cached map[string]zonegen.Account
}

func (o *countingOwners) User(ctx context.Context, uuid string) (zonegen.Account, error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.asked[uuid]++
	if o.down {
		return zonegen.Account{}, errors.New("ldap: i/o timeout")
	}
	return zonegen.Account{UUID: uuid, Login: "u" + uuid[:8], TritonCNSEnabled: "true", ApprovedForProvisioning: "true"}, nil
}

func (o *countingOwners) Cached(uuid string) (zonegen.Account, bool) {
	a, ok := o.cached[uuid]
	return a, ok
}

func (o *countingOwners) total() int {
	o.mu.Lock()
	defer o.mu.Unlock()
	n := 0
	for _, c := range o.asked {
		n += c
	}
	return n
}

// countingNetworks is a NAPI that counts the lookups of each network.
type countingNetworks struct {
	noNetworks
	mu    sync.Mutex
	asked map[string]int
}

func (n *countingNetworks) Network(_ context.Context, uuid string) (zonegen.Network, error) {
	n.mu.Lock()
	defer n.mu.Unlock()
	n.asked[uuid]++
	return zonegen.Network{UUID: uuid, Name: "net" + uuid[:4]}, nil
}

// warmVMs are 200 VMs of 50 owners, each with a NIC on one of 20
// networks.
func warmVMs() []zonegen.VM {
	var vms []zonegen.VM
	for i := range 200 {
		vms = append(vms, zonegen.VM{UUID: fmt.Sprintf("%08d-0000-4000-8000-000000000001", i),
			Alias: fmt.Sprint("vm", i), OwnerUUID: fmt.Sprintf("%08d-0000-4000-8000-000000000002", i%50), State: "running",
			NICs: []zonegen.NIC{{MAC: fmt.Sprintf("90:b8:d0:00:%02x:%02x", i/256, i%256), IP: fmt.Sprintf("10.0.%d.%d", i/250, 1+i%250),
				NetworkUUID: fmt.Sprintf("%08d-0000-4000-8000-000000000003", i%20)}}})
	}
	return vms
}

// halfCachedOwnersDown is a UFDS that is down and has cached the owners of every
// other VM of vms.
func halfCachedOwnersDown(vms []zonegen.VM) *countingOwners {
	owners := &countingOwners{asked: map[string]int{}, down: true, cached: map[string]zonegen.Account{}}
	for i, vm := range vms {
		if i%2 == 1 {
			owners.cached[vm.OwnerUUID] = zonegen.Account{UUID: vm.OwnerUUID, Login: "c" + vm.OwnerUUID[:8],
				TritonCNSEnabled: "true", ApprovedForProvisioning: "true"}
		}
	}
	return owners
}

func warmPipeline(t *testing.T, o Owners, n Networks) *Pipeline {
	t.Helper()
	st, err := store.Open(context.Background(), store.NewMemory(), store.Options{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	return New(Config{Store: st, Owners: o, Servers: noServers{}, Networks: n,
		Settings: Settings{Naming: zonegen.Config{UseAlias: true, UseLogin: true,
			Zones: []zonegen.ZoneConfig{{Name: "example.com", Networks: []string{"*"}}}}}})
}

// TestWarmAsksEachOnce: a pass over many VMs asks each owner and each
// network once, and decides every VM as evaluating it on its own does.
func TestWarmAsksEachOnce(t *testing.T) {
	owners := &countingOwners{asked: map[string]int{}}
	networks := &countingNetworks{asked: map[string]int{}}
	p := warmPipeline(t, owners, networks)
	var states []*vmState
	for _, vm := range warmVMs() {
		states = append(states, p.put(vm))
	}
	now := time.Now()
	cs := p.evaluateAll(context.Background(), states, now, "", nil)
	if len(owners.asked) != 50 || len(networks.asked) != 20 {
		t.Fatalf("%d owners and %d networks asked, want 50 and 20", len(owners.asked), len(networks.asked))
	}
	for id, n := range owners.asked {
		if n != 1 {
			t.Errorf("owner %s asked %d times, want once", id, n)
		}
	}
	for id, n := range networks.asked {
		if n != 1 {
			t.Errorf("network %s asked %d times, want once", id, n)
		}
	}
	if len(cs) != len(states) {
		t.Fatalf("%d VMs resolved of %d", len(cs), len(states))
	}
	alone := warmPipeline(t, &countingOwners{asked: map[string]int{}}, &countingNetworks{asked: map[string]int{}})
	for i, vm := range warmVMs() {
		c, ok := alone.evaluate(context.Background(), alone.put(vm), now, newLookups())
		if !ok || len(c.Zones) == 0 || !reflect.DeepEqual(c, cs[i]) {
			t.Fatalf("vm %s: in a pass %+v, alone %+v (resolved %v)", vm.UUID, cs[i], c, ok)
		}
	}
}

// TestWarmOutageWaitsOnce: while UFDS is down, a pass over many VMs asks
// it no more than warm has in flight at once, and the VMs of cached
// owners still resolve from the cache (but for the owner whose failure
// the pass recorded, as a pass in turn records its first).
func TestWarmOutageWaitsOnce(t *testing.T) {
	vms := warmVMs()
	owners := halfCachedOwnersDown(vms)
	p := warmPipeline(t, owners, &countingNetworks{asked: map[string]int{}})
	var states []*vmState
	for _, vm := range vms {
		states = append(states, p.put(vm))
	}
	cs := p.evaluateAll(context.Background(), states, time.Now(), "", nil)
	if n := owners.total(); n < 1 || n > warmParallel {
		t.Errorf("UFDS asked %d times in one pass while down, want 1 to %d", n, warmParallel)
	}
	// 25 cached owners of 4 VMs each; the one failure recorded may be
	// one of them.
	if len(cs) != 100 && len(cs) != 96 {
		t.Errorf("%d VMs resolved, want the 100 of cached owners (96 if the failure recorded is one)", len(cs))
	}
	for _, c := range cs {
		for _, vm := range vms {
			if vm.UUID == c.VM {
				if _, ok := owners.cached[vm.OwnerUUID]; !ok {
					t.Errorf("vm %s of an owner not cached resolved", c.VM)
				}
			}
		}
	}
}
