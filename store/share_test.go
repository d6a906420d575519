package store

import (
	"fmt"
	"testing"
)

// sharedNodes counts the nodes of zone whose records are a part of
// their VM's records, and fails if one is a part of a slice that is not
// the VM's current one: it would keep a replaced slice alive.
func sharedNodes(t *testing.T, s *Store, zone string) int {
	t.Helper()
	shared := 0
	it := s.Snapshot(zone).names.Iterator()
	for !it.Done() {
		name, n, _ := it.Next()
		own := s.vms[zone][n.recs[0].Source]
		switch {
		case aliases(n.recs, own):
			shared++
		case n.x == nil && len(own) > 0:
			if run, ok := recsAt(own, name); ok && len(run) == len(n.recs) && &run[0] != &n.recs[0] {
				t.Errorf("%s: the records of its only VM are a copy, not its own (%p, %p)", name, &run[0], &n.recs[0])
			}
		}
	}
	return shared
}

// TestNodesShareVMRecords: a name whose records all come from one VM
// serves that VM's own records, before and after the VM changes
// elsewhere, and a name several VMs provide has a copy.
func TestNodesShareVMRecords(t *testing.T) {
	m := NewMemory()
	s, _ := open(t, m, Options{})
	const svc = "svc.example.com."
	vm := func(i, gen int) []Record {
		return []Record{
			a(fmt.Sprintf("n%d.example.com.", i), fmt.Sprintf("10.0.%d.%d", gen, i), fmt.Sprintf("vm%d", i)),
			a(fmt.Sprintf("m%d.example.com.", i), fmt.Sprintf("10.1.0.%d", i), fmt.Sprintf("vm%d", i)),
			a(svc, fmt.Sprintf("10.2.0.%d", i), fmt.Sprintf("vm%d", i)),
		}
	}
	commit(t, s, contrib("vm1", map[string][]Record{zone: vm(1, 0)}), contrib("vm2", map[string][]Record{zone: vm(2, 0)}))
	if got := sharedNodes(t, s, zone); got != 4 {
		t.Errorf("after the bootstrap, %d nodes share their VM's records, want 4 (n1, m1, n2, m2)", got)
	}
	commit(t, s, contrib("vm1", map[string][]Record{zone: vm(1, 1)}))
	if got := sharedNodes(t, s, zone); got != 4 {
		t.Errorf("after vm1 changed n1, %d nodes share their VM's records, want 4", got)
	}
	commit(t, s, contrib("vm2", map[string][]Record{zone: vm(2, 0)[:2]}))
	if got := sharedNodes(t, s, zone); got != 5 {
		t.Errorf("after vm2 left %s, %d nodes share their VM's records, want 5 (with %s)", svc, got, svc)
	}
	if got := len(s.Snapshot(zone).Lookup(svc)); got != 1 {
		t.Errorf("%s has %d records, want 1", svc, got)
	}
	loaded, _ := open(t, m, Options{})
	if got := sharedNodes(t, loaded, zone); got != 5 {
		t.Errorf("after a load from the backend, %d nodes share their VM's records, want 5", got)
	}
}
