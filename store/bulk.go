package store

import (
	"cmp"
	"hash/maphash"
	"iter"
	"maps"
	"slices"
	"strings"
	"unsafe"
)

// A zone built from nothing — a bootstrap, a new zone, a zone loaded
// from the backend — or a commit that only adds VMs, at least as many
// records as the zone holds, gets its names in one pass over sorted
// slices rather than record by record through a map of edits and name
// by name into the tree: every VM's records are cut into runs of one
// name (a VM's records are sorted by name), the runs sorted once in the
// names' canonical order, every node built once from the runs of its
// name, and the tree built from the sorted nodes (buildNameTree). The
// diff is one walk over the old and the new names in step, sorted by
// name at the end; or, when the zone held few names (a bootstrap after
// the compute nodes' commit), every new name's records with those of
// the few old names compared one by one; and then the records added are
// only listed if the journal may keep them (bulkAdded).
//
// A name only one VM provides — most names — gets that VM's run itself
// as its records (shareRecs), in a node cut from a slab: nothing is
// copied, so a bootstrap of a million records allocates for its nodes a
// few bytes a name instead of a copy of every record grouped by name and
// another in each node (docs/BENCHMARKS.md, "Issue 18: memory per record
// after the bootstrap").

// bulkNames is a zone's names built from nothing.
type bulkNames struct {
	names []string // in nameOrder
	nodes []*node  // names[i]'s node
	// forms[i] is names[i]'s canonical form, made to sort them
	// (canonicalOrder) and given to the tree's index (buildIndexOf);
	// nil when some name has none. They share one buffer of a few bytes
	// more than the names: nothing keeps them past the build.
	forms []string
}

// nodeSlab is how many of the nodes that share a VM's records are
// allocated together: one allocation, and one object for the collector
// to mark, instead of one each; few enough that a slab kept alive by
// one node later commits did not replace holds little else.
const nodeSlab = 256

// buildBulk builds the nodes of a zone holding the records of the VMs of
// every map of vms (each VM's normalized: sorted, Source the VM, no
// duplicate RR; no VM in two maps) and nothing else. The nodes of names
// one VM provides share its records (shareRecs); the slices must be the
// ones the Store keeps. The result does not depend on the maps' order.
func buildBulk(maxMembers int, vms ...map[string][]Record) bulkNames {
	each := make([]iter.Seq[[]Record], len(vms))
	for i, m := range vms {
		each[i] = maps.Values(m)
	}
	return buildBulkOf(maxMembers, each...)
}

// buildBulkOf is buildBulk over the VMs' records as each sequence gives
// them, each sequence read twice. A bootstrap gives its VMs in the
// batch's order, which is the listing's and so, mostly, the order their
// records were made in: the names are then first read from memory in
// the order they lie there, not scattered as a map's order leaves them
// (the first read of each name was a tenth of the build).
func buildBulkOf(maxMembers int, vms ...iter.Seq[[]Record]) bulkNames {
	runs := runsOf(vms)
	order, forms, starts := canonicalOrder(len(runs), func(i int) string { return runs[i].name })
	names := 0
	for _, start := range starts {
		if start {
			names++
		}
	}
	b := bulkNames{names: make([]string, 0, names), nodes: make([]*node, 0, names)}
	if forms != nil {
		b.forms = make([]string, 0, names)
	}
	var slab []node
	var scratch edit // one edit for every name: a node keeps none of it
	var merged []Record
	for k := 0; k < len(order); {
		first := runs[order[k]]
		name := first.name
		j := k + 1
		for j < len(order) && !starts[j] {
			j++
		}
		var n *node
		if j == k+1 {
			if len(slab) == 0 {
				slab = make([]node, min(nodeSlab, len(order)-k))
			}
			n, slab = &slab[0], slab[1:]
			n.recs = first.recs
		} else {
			merged = merged[:0]
			for _, i := range order[k:j] {
				merged = append(merged, runs[i].recs...)
			}
			slices.SortFunc(merged, Record.Compare)
			scratch = groupEdit(scratch[:0], merged)
			n = scratch.node(name, maxMembers) // copies the records
		}
		b.names, b.nodes = append(b.names, name), append(b.nodes, n)
		if forms != nil {
			b.forms = append(b.forms, forms[k])
		}
		k = j
	}
	return b
}

// run is one VM's records at one name, its capacity cut so that nothing
// can append into the rest. The name is kept beside them: sorting reads
// it for every comparison, and the records are all over the heap.
type run struct {
	name string
	recs []Record
}

// runsOf cuts every VM's records (sorted by name) into runs of one name.
func runsOf(seqs []iter.Seq[[]Record]) []run {
	n := 0
	for _, vms := range seqs {
		for recs := range vms {
			for i := range recs {
				if i == 0 || recs[i].Name != recs[i-1].Name {
					n++
				}
			}
		}
	}
	runs := make([]run, 0, n)
	for _, vms := range seqs {
		for recs := range vms {
			for i := 0; i < len(recs); {
				j := i + 1
				for j < len(recs) && recs[j].Name == recs[i].Name {
					j++
				}
				runs = append(runs, run{recs[i].Name, recs[i:j:j]})
				i = j
			}
		}
	}
	return runs
}

// diffBulk returns the served records removed and added going from the
// names of old to those of b, each sorted by Record.Compare; but when old
// holds no or few names (a bootstrap), instead of the records added,
// later, which lists them or bounds their encoding on demand
// (ZoneChange.addedLater).
func diffBulk(old *nameTree, b bulkNames) (removed, added []Record, later *bulkAdded) {
	b.forms = nil // later may live on (ZoneChange.addedLater); the forms need not
	switch {
	case old.Len() == 0:
		return nil, nil, &bulkAdded{b: b}
	case old.Len() <= len(b.names)/smallOld:
		removed, changed := smallDiff(old, b)
		return removed, nil, &bulkAdded{b: b, changed: changed}
	}
	removed, added = walkDiff(old, b)
	return removed, added, nil
}

// smallOld is how many times fewer names than the built zone a zone must
// hold for its diff to be found name by name from the old names
// (smallDiff) rather than by walking both. In a bootstrap the compute
// nodes' few names are committed first, and a walk then made an entry
// for each of the million names the bootstrap adds, to sort them all
// again; a search costs a few dozen comparisons for each old name.
const smallOld = 8

// smallDiff is diffBulk by looking up each of old's names among b's: it
// returns the records removed, sorted, and for each of b's names that old
// has, the records added there (as served finds them); the names old
// lacks are added whole.
func smallDiff(old *nameTree, b bulkNames) (removed []Record, changed map[int32][]Record) {
	changed = make(map[int32][]Record, old.Len()) // b's index → its records added
	it := old.Iterator()
	for name, n, ok := it.Next(); ok; name, n, ok = it.Next() {
		i, found := slices.BinarySearchFunc(b.names, name, bulkOrder)
		if !found {
			removed = append(removed, n.recs...)
			continue
		}
		var a []Record
		removed, a = served(n.recs, b.nodes[i].recs, removed, nil)
		changed[int32(i)] = a
	}
	// Each name's records are sorted and the names distinct: sorting
	// them all orders them as the walk's sort by name then does.
	slices.SortFunc(removed, Record.Compare)
	return removed, changed
}

// bulkAdded is the records a diff adds to a zone built in one pass
// (bulkNames) from no or few names: every record of b's nodes, but at
// the names in changed, the records given there. Listing them (records)
// sorts every name again and copies every record, a million in a
// bootstrap; a commit leaves that undone when the journal could not keep
// the diff anyway (journalLocked), which encodedAtLeast tells without it.
type bulkAdded struct {
	b       bulkNames
	changed map[int32][]Record
	// atLeast, once measured, is encodedAtLeast's answer.
	atLeast int
}

// records lists the records added, sorted by Record.Compare.
func (a *bulkAdded) records() []Record { return allRecords(a.b, a.changed) }

// count is len(records()), without listing them.
func (a *bulkAdded) count() int {
	n := 0
	for i, nd := range a.b.nodes {
		if recs, ok := a.changed[int32(i)]; ok {
			n += len(recs)
		} else {
			n += len(nd.recs)
		}
	}
	return n
}

// encodedAtLeast returns a bound, never above the truth, on how many
// bytes EncodeDiff spends on the records added when the diff's zone is
// zone, whatever the records removed before them: each record's type
// (two bytes), a byte at least for each header (source, name, data), its
// data without the source's UUID when that is cut out (a byte for the
// cut's position then), and for the first record at each name the name
// relative to the zone without the UUID, and for each later one a source
// other than the previous record's. Where the names fall in the list,
// and so which source precedes each name's first record, is what it does
// not know: it counts that source as repeated. A name old had is counted
// as repeated too, since the last record removed may have it. For a
// bootstrap the bound is most of the real size (the data, the names),
// so that a journal of 16 MiB is seen not to hold a zone of a few
// hundred thousand records without encoding any. It stops counting once
// past enough: only whether the bound exceeds that is then told.
func (a *bulkAdded) encodedAtLeast(zone string, enough int) int {
	suffix := len(zoneSuffix(zone))
	total := 0
	for i, nd := range a.b.nodes {
		recs, changed := a.changed[int32(i)]
		if !changed {
			recs = nd.recs
		}
		for k, r := range recs {
			total += 2 + 3 // type; the source, name and data headers
			if sourceAt(r.Data, r.Source) >= 0 {
				total += 1 + len(r.Data) - len(r.Source)
			} else {
				total += len(r.Data)
			}
			switch {
			case k > 0:
				if r.Source != recs[k-1].Source {
					total += len(r.Source)
				}
			case !changed:
				stored := len(r.Name) - suffix
				if sourceAt(r.Name, r.Source) >= 0 {
					stored -= len(r.Source)
				}
				total += max(stored, 0)
			}
		}
		if total > enough {
			break
		}
	}
	return total
}

// bulkOrder is the order of a bulkNames' names: nameOrder, and names it
// finds equal (not absolute, say) by their bytes (canonicalOrder).
func bulkOrder(a, b string) int { return cmp.Or(cmpName(a, b), strings.Compare(a, b)) }

// walkDiff is diffBulk, the records added listed, by walking old's and b's names in step.
func walkDiff(old *nameTree, b bulkNames) (removed, added []Record) {
	type nameDiff struct {
		name           string
		removed, added []Record
	}
	// Sized for every name: growing it copied each entry again and
	// again in a bootstrap, whose names are all added.
	ds := make([]nameDiff, 0, old.Len()+len(b.names))
	it := old.Iterator()
	on, onode, ok := it.Next()
	for i := 0; ok || i < len(b.names); {
		c := 1
		switch {
		case !ok:
		case i == len(b.names):
			c = -1
		default:
			c = cmpName(on, b.names[i])
		}
		switch {
		case c < 0:
			ds = append(ds, nameDiff{name: on, removed: onode.recs})
		case c > 0:
			ds = append(ds, nameDiff{name: b.names[i], added: b.nodes[i].recs})
		default:
			if r, a := served(onode.recs, b.nodes[i].recs, nil, nil); len(r)+len(a) > 0 {
				ds = append(ds, nameDiff{name: on, removed: r, added: a})
			}
		}
		if c <= 0 {
			on, onode, ok = it.Next()
		}
		if c >= 0 {
			i++
		}
	}
	// Sorted through a compact index (name and position): in a
	// bootstrap this sorts every name, and moving the whole entries
	// about cost more than comparing them.
	ks := make([]keyed, len(ds))
	nr, na := 0, 0
	for i, d := range ds {
		ks[i] = keyed{s: d.name, i: int32(i)}
		nr, na = nr+len(d.removed), na+len(d.added)
	}
	sortKeyed(ks)
	if nr > 0 {
		removed = make([]Record, 0, nr)
	}
	if na > 0 {
		added = make([]Record, 0, na)
	}
	for _, k := range ks {
		d := &ds[k.i]
		removed, added = append(removed, d.removed...), append(added, d.added...)
	}
	return removed, added
}

// allRecords returns the records of b's nodes sorted by Record.Compare:
// the diff of a zone built from nothing, without the walk's entry for
// each name. A name in changed adds the records given there instead of
// its node's.
func allRecords(b bulkNames, changed map[int32][]Record) []Record {
	ks := make([]keyed, len(b.names))
	n := 0
	for i, name := range b.names {
		ks[i] = keyed{s: name, i: int32(i)}
		n += len(b.nodes[i].recs)
	}
	sortKeyed(ks)
	if n == 0 {
		return nil
	}
	out := make([]Record, 0, n)
	for _, k := range ks {
		recs := b.nodes[k.i].recs
		if len(changed) > 0 {
			if a, ok := changed[k.i]; ok {
				recs = a
			}
		}
		out = append(out, recs...)
	}
	if len(out) == 0 {
		return nil
	}
	return out
}

// groupEdit appends to e (empty) the edit of one name's records, sorted
// by Record.Compare: each distinct record once, its smallest Source as
// provider and the others in more.
func groupEdit(e edit, recs []Record) edit {
	for _, r := range recs {
		if n := len(e); n > 0 && rrCompare(e[n-1].rec, r) == 0 {
			if r.Source != e[n-1].rec.Source && !slices.Contains(e[n-1].more, r.Source) {
				e[n-1].more = append(e[n-1].more, r.Source)
			}
			continue
		}
		e = append(e, entry{rec: r})
	}
	return e
}

// canonicalOrder returns the indexes 0..n-1 of names, name(i) the i-th,
// in nameOrder, equal names next to each other; starts, starts[k]
// reporting whether name(order[k]) differs from the name before it; and
// when every name is plain, forms, forms[k] the canonical form of
// name(order[k]) (canonical, which is the key for a plain name), else
// nil. It sorts byte strings made of each name's labels from the right,
// each followed by a zero byte, which compare as nameOrder does, and are
// equal only for equal names, when every name is plain (appendKey:
// zonegen's are). Otherwise the result is checked, and sorted by
// nameOrder itself should the check fail.
func canonicalOrder(n int, name func(i int) string) (order []int32, forms []string, starts []bool) {
	// Every key is cut from one buffer: one allocation, not one a name.
	size := 0
	for i := range n {
		size += len(name(i)) + 1 // a key is no longer than its name and a byte
	}
	// The keys are appended within buf's room: it is never copied, and
	// each key's bytes, once cut, are not written again, nor after the
	// call (forms). No copy of a bootstrap's 60 MB of keys into strings.
	buf := make([]byte, 0, size)
	ks := make([]keyed, n)
	plain := true
	seed := maphash.MakeSeed()
	for i := range n {
		nm := name(i)
		start := len(buf)
		var isPlain bool
		buf, isPlain = appendKey(buf, nm)
		ks[i].i = int32(i)
		if len(buf) > start {
			ks[i].s = unsafe.String(&buf[start], len(buf)-start)
			ks[i].h = uint32(maphash.String(seed, ks[i].s))
		}
		plain = plain && isPlain
	}
	sortKeyed(ks)
	order = make([]int32, len(ks))
	for k := range ks {
		order[k] = ks[k].i
	}
	starts = make([]bool, len(ks))
	if plain {
		// Equal keys are equal names: told apart by the hashes the
		// sort carried, next to each other, and by the keys only when
		// those are equal, instead of reading both names again, each
		// somewhere else on the heap.
		forms = make([]string, len(ks))
		for k := range ks {
			forms[k] = ks[k].s
			starts[k] = k == 0 || ks[k].h != ks[k-1].h || ks[k].s != ks[k-1].s
		}
	}
	for k := 1; k < len(order) && !plain; k++ {
		a, b := name(int(order[k-1])), name(int(order[k]))
		if a != b && cmpName(a, b) >= 0 {
			// Names nameOrder finds equal but are not (not absolute,
			// say) are kept apart by their bytes, so that equal names
			// stay next to each other.
			slices.SortFunc(order, func(x, y int32) int {
				a, b := name(int(x)), name(int(y))
				return cmp.Or(cmpName(a, b), strings.Compare(a, b))
			})
			break
		}
	}
	if !plain {
		for k := range order {
			starts[k] = k == 0 || name(int(order[k])) != name(int(order[k-1]))
		}
	}
	return order, forms, starts
}

// appendKey appends name's canonical key, its labels from the right,
// each followed by a zero byte, and reports whether name is plain: the
// root, or absolute with no empty label and no zero byte. A plain name's
// key is its labels from the right each ended by a byte smaller than any
// in a label, so that keys compare label by label as nameOrder compares
// names (RFC 4034 §6.1), and two keys are equal only for equal names.
// Both come from the same pass over the name's bytes: a bootstrap's 1.5M
// names are read once here, not again to be checked.
func appendKey(buf []byte, name string) (_ []byte, plain bool) {
	if name == "." {
		return buf, true
	}
	end := len(name)
	plain = end > 1 && name[end-1] == '.'
	if end > 0 && name[end-1] == '.' {
		end--
	}
	for end > 0 {
		i := end - 1
		for i >= 0 && name[i] != '.' {
			if name[i] == 0 {
				plain = false
			}
			i--
		}
		if i+1 == end {
			plain = false // an empty label
		}
		buf = append(append(buf, name[i+1:end]...), 0)
		if i < 0 {
			break
		}
		if i == 0 {
			plain = false // name starts with a dot
		}
		end = i
	}
	return buf, plain
}
