package pipeline

import (
	"fmt"
	"maps"
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
