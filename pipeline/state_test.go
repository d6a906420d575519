package pipeline

import (
	"fmt"
	"maps"
	"reflect"
	"testing"

	"github.com/cnsd/cnsd/zonegen"
)

// TestIndexPresize: an index whose sets presize made before the VMs were
// added holds what adding them alone gives, with no empty set, and keeps
// the sets it had.
func TestIndexPresize(t *testing.T) {
	var vms []zonegen.VM
	for i := range 50 {
		server := fmt.Sprint("s", i%4)
		if i%7 == 0 {
			server = "" // not placed: in no set
		}
		vms = append(vms, zonegen.VM{UUID: fmt.Sprint("vm", i), ServerUUID: server})
	}
	vms = append(vms, zonegen.VM{UUID: "vm1", ServerUUID: "s9"}) // listed twice: the last counts
	key := func(vm *zonegen.VM) string { return vm.ServerUUID }
	want, got := index{}, index{"s0": {"old": {}}}
	want.add("s0", "old")
	got.presize(vms, key)
	for _, vm := range vms {
		for _, x := range []index{want, got} {
			if prev := x.lookup(vm.UUID); prev != "" {
				x.remove(prev, vm.UUID)
			}
			x.add(key(&vm), vm.UUID)
		}
	}
	if !maps.EqualFunc(got, want, func(a, b map[string]struct{}) bool { return maps.Equal(a, b) }) {
		t.Errorf("presized index %v, want %v", got, want)
	}
	for k, set := range got {
		if len(set) == 0 {
			t.Errorf("empty set for %q", k)
		}
	}
	if _, ok := got["s0"]["old"]; !ok {
		t.Error("presize dropped a set the index had")
	}
}

// TestPutFirstMatchesPut: the maps of a first listing filled at once
// (putFirst, on several cores or on one) hold what putting its VMs one
// by one gives, a VM listed twice under another owner and compute node
// (the last entry counts) included; every VM is marked present, and the
// states returned are the ones the map keeps, in the listing's order.
func TestPutFirstMatchesPut(t *testing.T) {
	defer func(n int) { parallelPutFirst = n }(parallelPutFirst)
	for _, n := range []int{1, 1 << 30} {
		for _, twice := range []bool{false, true} {
			t.Run(fmt.Sprintf("parallelPutFirst=%d,twice=%v", n, twice), func(t *testing.T) {
				parallelPutFirst = n
				var vms []zonegen.VM
				for i := range 200 {
					vm := zonegen.VM{UUID: fmt.Sprint("vm", i), OwnerUUID: fmt.Sprint("o", i%7), ServerUUID: fmt.Sprint("s", i%5), Alias: fmt.Sprint("a", i)}
					if i%11 == 0 {
						vm.ServerUUID = "" // not placed
					}
					vms = append(vms, vm)
				}
				if twice {
					vms = append(vms, zonegen.VM{UUID: "vm3", OwnerUUID: "o9", ServerUUID: "s9", Alias: "again"})
				}
				want := &Pipeline{vms: map[string]*vmState{}, byOwner: index{}, byServer: index{}}
				for _, vm := range vms {
					want.put(vm)
				}
				got, present := &Pipeline{byOwner: index{}, byServer: index{}}, map[string]bool{}
				states := got.putFirst(vms, present)
				sameSets := func(a, b map[string]struct{}) bool { return maps.Equal(a, b) }
				if !maps.EqualFunc(got.byOwner, want.byOwner, sameSets) || !maps.EqualFunc(got.byServer, want.byServer, sameSets) {
					t.Fatalf("indexes %v, %v; put one by one gives %v, %v", got.byOwner, got.byServer, want.byOwner, want.byServer)
				}
				if !maps.EqualFunc(got.vms, want.vms, func(a, b *vmState) bool { return reflect.DeepEqual(a.vm, b.vm) }) {
					t.Fatalf("VMs differ from those put one by one")
				}
				if len(states) != len(vms) {
					t.Fatalf("%d states for %d VMs", len(states), len(vms))
				}
				for i, vm := range vms {
					if states[i] != got.vms[vm.UUID] || !present[vm.UUID] {
						t.Fatalf("VM %d (%s): state %p, kept %p, present %v", i, vm.UUID, states[i], got.vms[vm.UUID], present[vm.UUID])
					}
				}
				if twice && got.vms["vm3"].vm.Alias != "again" {
					t.Errorf("vm3 listed twice keeps %+v, want its last entry", got.vms["vm3"].vm)
				}
			})
		}
	}
}

// lookup is the key whose set holds vm, or "".
func (x index) lookup(vm string) string {
	for k, set := range x {
		if _, ok := set[vm]; ok {
			return k
		}
	}
	return ""
}

// BenchmarkIndexFirstListing builds the owner and server indexes of a
// first listing of 100k VMs (1,000 owners, 100 compute nodes) by adding
// each VM, with and without presizing the sets first. ns/op is per
// listing.
func BenchmarkIndexFirstListing(b *testing.B) {
	vms := make([]zonegen.VM, 100_000)
	for i := range vms {
		vms[i] = zonegen.VM{UUID: fmt.Sprintf("c0000000-0000-4000-8000-%012d", i),
			OwnerUUID:  fmt.Sprintf("a0000000-0000-4000-8000-%012d", i*7%1000),
			ServerUUID: fmt.Sprintf("50000000-0000-4000-8000-%012d", i*13%100)}
	}
	for _, presize := range []bool{false, true} {
		b.Run(fmt.Sprint("presize=", presize), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				owners, servers := index{}, index{}
				if presize {
					owners.presize(vms, func(vm *zonegen.VM) string { return vm.OwnerUUID })
					servers.presize(vms, func(vm *zonegen.VM) string { return vm.ServerUUID })
				}
				for i := range vms {
					owners.add(vms[i].OwnerUUID, vms[i].UUID)
					servers.add(vms[i].ServerUUID, vms[i].UUID)
				}
			}
		})
	}
}
