package store

import "slices"

// rrCompare orders records by (name, type, data), ignoring Source: the
// identity of a served record. Two VMs providing the same rrCompare-equal
// record serve it once.
func rrCompare(a, b Record) int { return a.CompareRR(b) }

// entry is a served record being edited: rec.Source is its smallest
// provider and more the others, sorted. more may be shared with a
// published node, so it is copied before any change.
type entry struct {
	rec  Record
	more []string
}

// edit is a mutable copy of one name's node for a commit to change.
type edit []entry

// editOf copies n (which may be nil) into an edit: its served records
// and those it holds (members over Options.MaxMembers), in order.
func editOf(n *node) edit {
	e := servedOf(n)
	if n != nil && len(n.held) > 0 {
		e = append(e, n.held...)
		slices.SortFunc(e, func(x, y entry) int { return rrCompare(x.rec, y.rec) })
	}
	return e
}

// servedOf copies n's served records (which may be nil) into an edit.
func servedOf(n *node) edit {
	if n == nil {
		return nil
	}
	e := make(edit, len(n.recs), len(n.recs)+len(n.held))
	for i, r := range n.recs {
		e[i].rec = r
		if n.more != nil {
			e[i].more = n.more[i]
		}
	}
	return e
}

func (e edit) find(r Record) (int, bool) {
	return slices.BinarySearchFunc(e, r, func(x entry, r Record) int { return rrCompare(x.rec, r) })
}

// add records that vm provides r.
func (e edit) add(r Record, vm string) edit {
	i, found := e.find(r)
	if !found {
		r.Source = vm
		return slices.Insert(e, i, entry{rec: r})
	}
	x := &e[i]
	switch j, has := slices.BinarySearch(x.more, vm); {
	case vm == x.rec.Source || has:
	case vm < x.rec.Source:
		x.more = slices.Insert(slices.Clone(x.more), 0, x.rec.Source)
		x.rec.Source = vm
	default:
		x.more = slices.Insert(slices.Clone(x.more), j, vm)
	}
	return e
}

// remove records that vm no longer provides r; the record goes when no
// provider is left.
func (e edit) remove(r Record, vm string) edit {
	i, found := e.find(r)
	if !found {
		return e
	}
	x := &e[i]
	switch j, has := slices.BinarySearch(x.more, vm); {
	case vm == x.rec.Source && len(x.more) == 0:
		return slices.Delete(e, i, i+1)
	case vm == x.rec.Source:
		x.rec.Source, x.more = x.more[0], x.more[1:]
	case has:
		x.more = slices.Delete(slices.Clone(x.more), j, j+1)
	}
	return e
}

// drop removes r whoever provides it (a follower applying a journal diff).
func (e edit) drop(r Record) edit {
	if i, found := e.find(r); found {
		return slices.Delete(e, i, i+1)
	}
	return e
}

// node freezes the edit as name's node, publishing the records of at
// most max members (0: all; members.go); nil when no record is left.
func (e edit) node(name string, max int) *node {
	if len(e) == 0 {
		return nil
	}
	e, held := e.split(name, max)
	n := &node{recs: make([]Record, len(e)), held: held}
	for i, x := range e {
		n.recs[i] = x.rec
		if len(x.more) > 0 {
			if n.more == nil {
				n.more = make([][]string, len(e))
			}
			n.more[i] = x.more
		}
	}
	return n
}

// served appends to removed and added the change of the served set at one
// name from old to new (both sorted by rrCompare).
func served(old, new []Record, removed, added []Record) ([]Record, []Record) {
	i, j := 0, 0
	for i < len(old) || j < len(new) {
		c := 0
		switch {
		case i == len(old):
			c = 1
		case j == len(new):
			c = -1
		default:
			c = rrCompare(old[i], new[j])
		}
		switch {
		case c < 0:
			removed = append(removed, old[i])
			i++
		case c > 0:
			added = append(added, new[j])
			j++
		default:
			i, j = i+1, j+1
		}
	}
	return removed, added
}

func recsOf(n *node) []Record {
	if n == nil {
		return nil
	}
	return n.recs
}
