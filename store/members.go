package store

import (
	"cmp"
	"hash/fnv"
	"slices"
)

// A name with more providing VMs (members) than Options.MaxMembers
// publishes the records of MaxMembers of them: those with the lowest
// memberRank. The rank depends on the VM's UUID and the name only, so the
// choice is the same in every process and after every restart, whatever
// order the VMs arrived in, and it does not churn: a member stays
// published until it leaves or one ranked lower joins, and when one
// leaves exactly the next-ranked takes its place. The other members'
// records are kept in the node (held) and published when they rank
// within the cap again; they are in no diff, journal or answer.

// memberRank is a VM's rank among the members of name: FNV-1a of
// "uuid name".
func memberRank(vm, name string) uint64 {
	h := fnv.New64a()
	h.Write([]byte(vm))
	h.Write([]byte{' '})
	h.Write([]byte(name))
	return h.Sum64()
}

// chosenMembers returns the members of name that publish, given the
// records' providers in e, or nil when all do (max <= 0, or no more
// members than max).
func (e edit) chosenMembers(name string, max int) map[string]bool {
	if max <= 0 {
		return nil
	}
	var vms []string
	for _, x := range e {
		vms = append(vms, x.rec.Source)
		vms = append(vms, x.more...)
	}
	slices.Sort(vms)
	vms = slices.Compact(vms)
	if len(vms) <= max {
		return nil
	}
	type ranked struct {
		vm   string
		rank uint64
	}
	rs := make([]ranked, len(vms))
	for i, vm := range vms {
		rs[i] = ranked{vm, memberRank(vm, name)}
	}
	slices.SortFunc(rs, func(a, b ranked) int {
		return cmp.Or(cmp.Compare(a.rank, b.rank), cmp.Compare(a.vm, b.vm))
	})
	chosen := make(map[string]bool, max)
	for _, r := range rs[:max] {
		chosen[r.vm] = true
	}
	return chosen
}

// split divides e into the entries name publishes under max members
// and those it holds: an entry is published when any of its providers is
// chosen.
func (e edit) split(name string, max int) (served, held edit) {
	chosen := e.chosenMembers(name, max)
	if chosen == nil {
		return e, nil
	}
	for _, x := range e {
		if chosen[x.rec.Source] || slices.ContainsFunc(x.more, func(vm string) bool { return chosen[vm] }) {
			served = append(served, x)
		} else {
			held = append(held, x)
		}
	}
	return served, held
}
