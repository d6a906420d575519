package store

import (
	"cmp"
	"slices"
	"strings"
)

// A zone built from nothing — a bootstrap, a new zone, a zone loaded
// from the backend — or a commit that only adds VMs, at least as many
// records as the zone holds, gets its names in one pass over sorted
// slices rather than record by record through a map of edits and name
// by name into the tree: the records of every VM in the zone are
// grouped by name, the names sorted once, every node built once, and
// the tree built from the sorted nodes (buildNameTree). The diff is one
// walk over the old and the new names in step, sorted by name at the
// end.

// bulkNames is a zone's names built from nothing.
type bulkNames struct {
	names []string // in nameOrder
	nodes []*node  // names[i]'s node
}

// buildBulk builds the nodes of a zone holding vms' records (each VM's
// normalized: sorted, Source the VM, no duplicate RR) and nothing else.
// The result does not depend on the map's order.
func buildBulk(vms map[string][]Record, maxMembers int) bulkNames {
	g := groupByName(vms)
	nodes := make([]*node, len(g.names))
	var scratch edit // one edit for every name: a node keeps none of it
	for i, name := range g.names {
		recs := g.recs[g.off[i]:g.off[i+1]]
		if len(recs) > 1 {
			slices.SortFunc(recs, Record.Compare)
		}
		scratch = groupEdit(scratch[:0], recs)
		nodes[i] = scratch.node(name, maxMembers)
	}
	order := canonicalOrder(g.names)
	b := bulkNames{names: make([]string, len(order)), nodes: make([]*node, len(order))}
	for k, i := range order {
		b.names[k], b.nodes[k] = g.names[i], nodes[i]
	}
	return b
}

// treeDiff returns the served records removed and added going from the
// names of old to those of b, each sorted by Record.Compare.
func treeDiff(old *nameTree, b bulkNames) (removed, added []Record) {
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
		ks[i] = keyed{prefix8(d.name), d.name, int32(i)}
		nr, na = nr+len(d.removed), na+len(d.added)
	}
	slices.SortFunc(ks, keyed.compare)
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

// nameGroups are records grouped by name: the records of names[i] are
// recs[off[i]:off[i+1]], in no particular order.
type nameGroups struct {
	names []string
	off   []int
	recs  []Record
}

// groupByName counts the records of each name, then places each record
// in its name's range of one slice: one map lookup per run of records of
// one name. The VMs are taken in the map's order, the same for both
// passes; the result does not depend on it, since buildBulk sorts each
// name's records and the names.
func groupByName(vms map[string][]Record) nameGroups {
	lists := make([][]Record, 0, len(vms)) // one order for both passes
	total := 0
	for _, recs := range vms {
		lists = append(lists, recs)
		total += len(recs)
	}
	at := make(map[string]int32, total) // no rehash: names are at most records
	g := nameGroups{names: make([]string, 0, total/2)}
	counts := make([]int32, 0, total/2)
	gids := make([]int32, 0, total)
	// A VM's records are sorted by name, so most follow one of the same
	// name: they take its id without a lookup.
	prev, pid := "", int32(-1)
	for _, recs := range lists {
		for _, r := range recs {
			id := pid
			if pid < 0 || r.Name != prev {
				var ok bool
				if id, ok = at[r.Name]; !ok {
					id = int32(len(g.names))
					at[r.Name] = id
					g.names, counts = append(g.names, r.Name), append(counts, 0)
				}
				prev, pid = r.Name, id
			}
			counts[id]++
			gids = append(gids, id)
		}
	}
	g.off = make([]int, len(g.names)+1)
	for i, c := range counts {
		g.off[i+1] = g.off[i] + int(c)
	}
	next := slices.Clone(g.off[:len(g.names)])
	g.recs = make([]Record, total)
	k := 0
	for _, recs := range lists {
		for _, r := range recs {
			id := gids[k]
			g.recs[next[id]] = r
			next[id]++
			k++
		}
	}
	return g
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

// canonicalOrder returns the indexes of names in nameOrder. It sorts
// byte strings made of each name's labels from the right, each followed
// by a zero byte, which compare as nameOrder does when no label holds a
// zero byte or an escaped dot (zonegen's never do); the result is
// checked, and sorted by nameOrder itself should the check fail.
func canonicalOrder(names []string) []int32 {
	// Every key is cut from one string: one allocation, not one a name.
	size := 0
	for _, name := range names {
		size += len(name) + 1 // a key is no longer than its name and a byte
	}
	buf := make([]byte, 0, size)
	ends := make([]int, len(names))
	for i, name := range names {
		buf = canonicalKey(buf, name)
		ends[i] = len(buf)
	}
	all := string(buf)
	ks := make([]keyed, len(names))
	for i, end := range ends {
		start := 0
		if i > 0 {
			start = ends[i-1]
		}
		ks[i] = keyed{s: all[start:end], i: int32(i)}
	}
	// Every key starts with the zone's labels: the prefixes compared
	// first are taken after the bytes all keys share.
	common := 0
	if len(ks) > 0 {
		common = len(ks[0].s)
		for _, k := range ks[1:] {
			common = min(common, len(k.s))
			for common > 0 && k.s[:common] != ks[0].s[:common] {
				common--
			}
		}
	}
	for i := range ks {
		ks[i].pre = prefix8(ks[i].s[common:])
	}
	slices.SortFunc(ks, keyed.compare)
	order := make([]int32, len(ks))
	for k := range ks {
		order[k] = ks[k].i
	}
	for k := 1; k < len(order); k++ {
		if cmpName(names[order[k-1]], names[order[k]]) >= 0 {
			slices.SortFunc(order, func(a, b int32) int { return cmpName(names[a], names[b]) })
			break
		}
	}
	return order
}

// canonicalKey appends name's labels from the right, each followed by a
// zero byte.
func canonicalKey(buf []byte, name string) []byte {
	name = strings.TrimSuffix(name, ".")
	for name != "" {
		i := strings.LastIndexByte(name, '.')
		buf = append(append(buf, name[i+1:]...), 0)
		if i < 0 {
			break
		}
		name = name[:i]
	}
	return buf
}

// keyed is a string to sort and its position, with its first eight bytes
// as a number compared first: most comparisons of a sort of a zone's
// names then read no string, whose bytes are all over the heap.
type keyed struct {
	pre uint64
	s   string
	i   int32
}

// compare orders by s: pre is a prefix of s padded with zero bytes, and
// padding with the smallest byte keeps the order of the strings.
func (a keyed) compare(b keyed) int {
	if c := cmp.Compare(a.pre, b.pre); c != 0 {
		return c
	}
	return strings.Compare(a.s, b.s)
}

// prefix8 is s's first eight bytes, big endian, padded with zero bytes.
func prefix8(s string) uint64 {
	var p uint64
	for i := range 8 {
		p <<= 8
		if i < len(s) {
			p |= uint64(s[i])
		}
	}
	return p
}
