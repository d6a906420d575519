package store

import (
	"maps"
	"slices"
	"strings"
)

// A zone built from nothing — a bootstrap, a new zone, a zone loaded
// from the backend — gets its names in one pass over sorted slices
// rather than record by record through a map of edits and name by name
// into the tree: its records are grouped by name, the names sorted once
// in each order needed, every node built once, and the tree built from
// the sorted nodes (buildNameTree). The served records come out in
// Record.Compare order, ready to be the Diff that adds them all.

// bulkNames is a zone's names built from nothing.
type bulkNames struct {
	names []string // in nameOrder
	nodes []*node  // names[i]'s node
	added []Record // every served record, by Record.Compare (with wantAdded)
}

// buildBulk builds the nodes of a zone holding vms' records (each VM's
// normalized: sorted, Source the VM, no duplicate RR) and nothing else.
// The result does not depend on the map's order.
func buildBulk(vms map[string][]Record, maxMembers int, wantAdded bool) bulkNames {
	g := groupByName(vms)
	nodes := make([]*node, len(g.names))
	served := 0
	for i, name := range g.names {
		recs := g.recs[g.off[i]:g.off[i+1]]
		if len(recs) > 1 {
			slices.SortFunc(recs, Record.Compare)
		}
		nodes[i] = groupEdit(recs).node(name, maxMembers)
		served += len(nodes[i].recs)
	}
	var out bulkNames
	if wantAdded {
		byString := make([]int32, len(g.names))
		for i := range byString {
			byString[i] = int32(i)
		}
		slices.SortFunc(byString, func(a, b int32) int { return strings.Compare(g.names[a], g.names[b]) })
		out.added = make([]Record, 0, served)
		for _, i := range byString {
			out.added = append(out.added, nodes[i].recs...)
		}
	}
	order := canonicalOrder(g.names)
	out.names, out.nodes = make([]string, len(order)), make([]*node, len(order))
	for k, i := range order {
		out.names[k], out.nodes[k] = g.names[i], nodes[i]
	}
	return out
}

// nameGroups are records grouped by name: the records of names[i] are
// recs[off[i]:off[i+1]], in no particular order.
type nameGroups struct {
	names []string
	off   []int
	recs  []Record
}

// groupByName counts the records of each name, then places each record
// in its name's range of one slice: one map lookup per record.
func groupByName(vms map[string][]Record) nameGroups {
	order := slices.Sorted(maps.Keys(vms)) // one fixed order for both passes
	total := 0
	for _, recs := range vms {
		total += len(recs)
	}
	at := make(map[string]int32, total) // no rehash: names are at most records
	var g nameGroups
	var counts []int
	gids := make([]int32, 0, total)
	for _, vm := range order {
		for _, r := range vms[vm] {
			id, ok := at[r.Name]
			if !ok {
				id = int32(len(g.names))
				at[r.Name] = id
				g.names, counts = append(g.names, r.Name), append(counts, 0)
			}
			counts[id]++
			gids = append(gids, id)
		}
	}
	g.off = make([]int, len(g.names)+1)
	for i, c := range counts {
		g.off[i+1] = g.off[i] + c
	}
	next := slices.Clone(g.off[:len(g.names)])
	g.recs = make([]Record, total)
	k := 0
	for _, vm := range order {
		for _, r := range vms[vm] {
			id := gids[k]
			g.recs[next[id]] = r
			next[id]++
			k++
		}
	}
	return g
}

// groupEdit makes the edit of one name's records, sorted by
// Record.Compare: each distinct record once, its smallest Source as
// provider and the others in more.
func groupEdit(recs []Record) edit {
	e := make(edit, 0, len(recs))
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
	type keyed struct {
		key string
		i   int32
	}
	ks := make([]keyed, len(names))
	var buf []byte
	for i, name := range names {
		buf = canonicalKey(buf[:0], name)
		ks[i] = keyed{string(buf), int32(i)}
	}
	slices.SortFunc(ks, func(a, b keyed) int { return strings.Compare(a.key, b.key) })
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
