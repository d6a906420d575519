package store

import (
	"context"
	"slices"
	"strings"
)

// installLocked makes applied plans the Store's state: the VMs' records,
// then every new snapshot in one swap. vmZones, when not nil, is what
// vmZonesAfter made of the Store's vmZones for these plans, to be taken
// as it is.
func (s *Store) installLocked(plans []*zonePlan, vmZones map[string][]string) {
	set := make(map[string]*Snapshot, len(plans))
	if vmZones != nil {
		s.vmZones = vmZones
	}
	for _, p := range plans {
		s.installVMsLocked(p, len(plans), vmZones == nil)
		delete(s.dropped, p.zone)
		set[p.zone] = p.next
	}
	s.publishLocked(set)
}

// installVMsLocked makes the plan's VMs' records the zone's and, when
// editZones, the zone one of each VM's zones or no longer one of them
// (vmZones). plans is how many zones the commit changes.
func (s *Store) installVMsLocked(p *zonePlan, plans int, editZones bool) {
	vms := s.vms[p.zone]
	// A zone with fewer VMs than the plan brings, none of which it had
	// (a bootstrap's, beside the compute nodes' few), takes the plan's
	// map, its own few VMs added after, rather than adding the plan's
	// 100k to its own entry by entry: every VM of the plan then has
	// records (none had any to lose), and nothing keeps the plan once
	// it is installed, nor reads its ZoneChange.SetVMs (the same map)
	// once applied.
	had := vms
	adopt := len(vms) == 0 || (!p.removes && len(p.set) > len(vms))
	if adopt {
		vms = p.set
		s.vms[p.zone] = vms
	}
	if !adopt || editZones {
		for vm, recs := range p.set {
			switch {
			case len(recs) == 0:
				delete(vms, vm)
			case !adopt:
				vms[vm] = recs
			}
			if !editZones {
				continue
			}
			if len(recs) == 0 {
				if s.vmZones[vm] = removeSorted(s.vmZones[vm], p.zone); len(s.vmZones[vm]) == 0 {
					delete(s.vmZones, vm)
				}
				continue
			}
			zones := s.vmZones[vm]
			if zones == nil {
				// Room for a VM's usual few zones (instance, public,
				// reverse) in a bootstrap: one allocation, not three.
				zones = make([]string, 0, min(plans, 4))
			}
			s.vmZones[vm] = insertSorted(zones, p.zone)
		}
	}
	if adopt && len(had) > 0 {
		for vm, recs := range had {
			vms[vm] = recs
		}
	}
}

// freshVMZones is the fewest VMs a commit brings, and at least as many
// as the Store has, from which vmZonesAfter makes the VMs' zones anew.
var freshVMZones = 10_000

// vmZonesAfter returns the Store's vmZones as installing plans leaves it,
// in a map of its own, or nil when the plans bring fewer VMs than
// freshVMZones or than the Store has. A bootstrap's 100k VMs come after
// the compute nodes' hundred: the map is then made at its size once
// rather than grown, and rehashed, VM by VM; and writeLocked makes it
// while Apply writes, out of the commit's way. It only reads the Store:
// the zone lists of the VMs it keeps are copied, not edited in place, so
// that a failed Apply leaves vmZones as it was.
func (s *Store) vmZonesAfter(plans []*zonePlan) map[string][]string {
	n := 0
	for _, p := range plans {
		n = max(n, len(p.set))
	}
	if n < freshVMZones || n < len(s.vmZones) {
		return nil
	}
	out := make(map[string][]string, len(s.vmZones)+n)
	for vm, zones := range s.vmZones {
		out[vm] = slices.Clone(zones)
	}
	for _, p := range plans {
		// The deltas, not the map of the same VMs: in the batch's
		// order, each VM's name is read where it lies next to the one
		// before, not scattered.
		for _, d := range p.deltas {
			vm, recs := d.vm, d.nw
			if len(recs) > 0 {
				zones := out[vm]
				if zones == nil {
					// Room for a VM's usual few zones (instance, public,
					// reverse): one allocation, not three.
					zones = make([]string, 0, min(len(plans), 4))
				}
				out[vm] = insertSorted(zones, p.zone)
				continue
			}
			if out[vm] = removeSorted(out[vm], p.zone); len(out[vm]) == 0 {
				delete(out, vm)
			}
		}
	}
	return out
}

// dropEmptyLocked deletes the zones published with no records — their
// final, empty serial is out — from the backend, then from the published
// snapshots, and remembers their final serials. Kept zones (Keep) stay.
// On error the zones stay published empty and the next commit tries
// again.
func (s *Store) dropEmptyLocked(ctx context.Context) {
	var changes []ZoneChange
	for name, snap := range *s.zones.Load() {
		if snap.Len() == 0 && !s.kept[name] {
			changes = append(changes, ZoneChange{Zone: name, Prev: snap.serial, Next: snap.serial, Drop: true})
		}
	}
	if len(changes) == 0 {
		return
	}
	slices.SortFunc(changes, func(a, b ZoneChange) int { return strings.Compare(a.Zone, b.Zone) })
	if err := s.b.Apply(ctx, s.opts.Epoch, changes); err != nil {
		s.log.Warn("dropping empty zones failed; retrying on the next commit", "zones", zoneList(changes), "err", err)
		return
	}
	set := make(map[string]*Snapshot, len(changes))
	for _, c := range changes {
		delete(s.vms, c.Zone)
		s.dropped[c.Zone] = c.Prev
		set[c.Zone] = nil
		s.log.Info("zone dropped", "zone", c.Zone, "serial", c.Prev)
	}
	s.publishLocked(set)
}
