package store

import "slices"

// loadZoneLocked takes a zone as the backend keeps it into s.vms and
// s.vmZones and returns its snapshot. A zone with no records left (its
// drop did not happen) is served empty and dropped by the next commit.
func (s *Store) loadZoneLocked(name string, zd *ZoneData) *Snapshot {
	vms := make(map[string][]Record, len(zd.VMs))
	for vm, recs := range zd.VMs {
		recs = normalize(vm, recs)
		if len(recs) == 0 {
			continue
		}
		vms[vm] = recs
		s.vmZones[vm] = insertSorted(s.vmZones[vm], name)
	}
	s.vms[name] = vms
	snap := buildSnapshot(name, zd.Serial, vms, s.opts.MaxMembers)
	for _, d := range zd.Journal {
		e := newJEntry(d)
		snap.journal = append(snap.journal, e)
		snap.jbytes += e.size()
	}
	return snap
}

// buildSnapshot builds a zone's snapshot from scratch out of its VMs'
// records (normalized).
func buildSnapshot(zone string, serial Serial, vms map[string][]Record, maxMembers int) *Snapshot {
	snap := &Snapshot{zone: zone, serial: serial, sizes: rrsetSizes{}}
	b := buildBulk(maxMembers, vms)
	snap.fill(b)
	return snap
}

// fill gives an empty snapshot the names built in bulk.
func (s *Snapshot) fill(b bulkNames) {
	for _, n := range b.nodes {
		s.replaced(nil, n)
	}
	s.names = buildNameTreeOf(b.names, b.nodes, b.forms)
}

// normalize returns recs as one VM's records: Source set to vm, sorted by
// Record.Compare, without duplicate (name, type, data). recs is returned
// as is when it already is so, and copied otherwise.
func normalize(vm string, recs []Record) []Record {
	ok := true
	for i, r := range recs {
		if r.Source != vm || (i > 0 && rrCompare(recs[i-1], r) >= 0) {
			ok = false
			break
		}
	}
	if ok {
		return recs
	}
	out := slices.Clone(recs)
	for i := range out {
		out[i].Source = vm
	}
	slices.SortFunc(out, Record.Compare)
	out = slices.CompactFunc(out, func(a, b Record) bool { return rrCompare(a, b) == 0 })
	// The copy is the Store's own: records at one name take one string
	// for it, so that the copies a caller made per record (a service
	// name built once per member, say) can go.
	for i := 1; i < len(out); i++ {
		if out[i].Name == out[i-1].Name {
			out[i].Name = out[i-1].Name
		}
	}
	return out
}

// insertSorted adds s to the sorted list ss unless it is there.
func insertSorted(ss []string, s string) []string {
	if i, found := slices.BinarySearch(ss, s); !found {
		return slices.Insert(ss, i, s)
	}
	return ss
}

// removeSorted drops s from the sorted list ss.
func removeSorted(ss []string, s string) []string {
	if i, found := slices.BinarySearch(ss, s); found {
		return slices.Delete(ss, i, i+1)
	}
	return ss
}
