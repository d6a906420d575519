package pipeline

import (
	"time"

	"github.com/cnsd/cnsd/parallel"
	"github.com/cnsd/cnsd/zonegen"
)

// vmState is what the pipeline keeps of one VM between changes: enough to
// evaluate it again when its owner, compute node or a self-removal
// changes, and to explain its records.
type vmState struct {
	vm zonegen.VM
	// services are the hysteresis keys (owner/service) the VM is a
	// member of.
	services  []string
	decision  zonegen.Decision
	notes     []zonegen.Reason
	evaluated time.Time
}

// index maps an owner or server uuid to the VMs that have it.
type index map[string]map[string]struct{}

func (x index) add(key, vm string) {
	if key == "" {
		return
	}
	set := x[key]
	if set == nil {
		set = map[string]struct{}{}
		x[key] = set
	}
	set[vm] = struct{}{}
}

// presize makes the sets of the keys of vms that x lacks, each sized
// for the VMs of vms that have it.
func (x index) presize(vms []zonegen.VM, key func(*zonegen.VM) string) {
	n := map[string]int{}
	for i := range vms {
		if k := key(&vms[i]); k != "" && x[k] == nil {
			n[k]++
		}
	}
	for k, c := range n {
		x[k] = make(map[string]struct{}, c)
	}
}

func (x index) remove(key, vm string) {
	if set := x[key]; set != nil {
		delete(set, vm)
		if len(set) == 0 {
			delete(x, key)
		}
	}
}

// put records vm as it is now, keeping its hysteresis membership; the
// caller holds mu.
func (p *Pipeline) put(vm zonegen.VM) *vmState {
	st := p.vms[vm.UUID]
	if st == nil {
		st = &vmState{}
		p.vms[vm.UUID] = st
	} else {
		p.byOwner.remove(st.vm.OwnerUUID, vm.UUID)
		p.byServer.remove(st.vm.ServerUUID, vm.UUID)
	}
	st.vm = vm
	p.byOwner.add(vm.OwnerUUID, vm.UUID)
	p.byServer.add(vm.ServerUUID, vm.UUID)
	return st
}

// putFirst puts the VMs of the first listing, which finds no VM known,
// as put does one by one, and marks each present; it returns their
// states in the listing's order. The maps are sized at once rather than
// grown through a bootstrap's 100k VMs (growing the sets of the compute
// nodes' thousand VMs each was most of put), and for a large listing
// each filled on a core of its own: one after the other, the four took
// a quarter of a second between the listing's end and its commit. The
// caller holds mu.
func (p *Pipeline) putFirst(vms []zonegen.VM, present map[string]bool) []*vmState {
	p.vms = make(map[string]*vmState, len(vms))
	states := make([]*vmState, len(vms))
	twice := false // a UUID the listing holds twice: put resolves it
	fill := []func(){
		func() {
			for i := range vms {
				if st := p.vms[vms[i].UUID]; st != nil {
					twice, states[i] = true, st
					continue
				}
				states[i] = &vmState{vm: vms[i]}
				p.vms[vms[i].UUID] = states[i]
			}
		},
		func() {
			for i := range vms {
				present[vms[i].UUID] = true
			}
		},
		func() {
			p.byOwner.presize(vms, func(vm *zonegen.VM) string { return vm.OwnerUUID })
			for i := range vms {
				p.byOwner.add(vms[i].OwnerUUID, vms[i].UUID)
			}
		},
		func() {
			p.byServer.presize(vms, func(vm *zonegen.VM) string { return vm.ServerUUID })
			for i := range vms {
				p.byServer.add(vms[i].ServerUUID, vms[i].UUID)
			}
		},
	}
	workers := 1
	if len(vms) >= parallelPutFirst {
		workers = len(fill)
	}
	parallel.Each(len(fill), workers, func(i int) { fill[i]() })
	if twice {
		// The indexes may hold a twice-listed VM under the owner or
		// compute node of its first entry too: made again, one VM at a
		// time, as put leaves them.
		clear(p.vms)
		clear(p.byOwner)
		clear(p.byServer)
		for i := range vms {
			states[i] = p.put(vms[i])
		}
	}
	return states
}

// parallelPutFirst is the fewest VMs of a first listing whose maps are
// filled on several cores; tests lower it.
var parallelPutFirst = 4096

// drop forgets a VM; the caller holds mu.
func (p *Pipeline) drop(uuid string, now time.Time) {
	st := p.vms[uuid]
	if st == nil {
		return
	}
	p.byOwner.remove(st.vm.OwnerUUID, uuid)
	p.byServer.remove(st.vm.ServerUUID, uuid)
	delete(p.vms, uuid)
	delete(p.retry, uuid)
	p.tracker.Forget(now, uuid)
}

// isUUID reports whether s has the shape of a UUID, which tells a VM's
// records in the store from the ones other sources (the catalog zone,
// the configured NS records) wrote.
func isUUID(s string) bool {
	if len(s) != 36 {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch i {
		case 8, 13, 18, 23:
			if c != '-' {
				return false
			}
		default:
			if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F') {
				return false
			}
		}
	}
	return true
}
