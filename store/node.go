package store

import (
	"slices"
	"strings"
	"unsafe"
)

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
	if held := n.heldOf(); len(held) > 0 {
		e = append(e, held...)
		slices.SortFunc(e, func(x, y entry) int { return rrCompare(x.rec, y.rec) })
	}
	return e
}

// servedOf copies n's served records (which may be nil) into an edit.
func servedOf(n *node) edit {
	if n == nil {
		return nil
	}
	e := make(edit, len(n.recs), len(n.recs)+len(n.heldOf()))
	for i, r := range n.recs {
		e[i].rec, e[i].more = r, n.moreAt(i)
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
	n := &node{recs: make([]Record, len(e))}
	if len(held) > 0 {
		n.x = &nodeExtra{held: held}
	}
	for i, x := range e {
		n.recs[i] = x.rec
		if len(x.more) > 0 {
			if n.x == nil {
				n.x = &nodeExtra{}
			}
			if n.x.more == nil {
				n.x.more = make([][]string, len(e))
			}
			n.x.more[i] = x.more
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

// shareRecs makes n's records a part of own, the sorted records of the
// VM that provides all of them, when n has no other provider and holds
// nothing back: then they are exactly that VM's records at the name,
// which the Store keeps anyway (Store.vms), and a copy would double
// them. own must be the VM's current records, so that the nodes keep no
// replaced slice alive (zonePlan.repoint).
func shareRecs(n *node, own func(vm string) []Record) *node {
	if n == nil || n.x != nil || len(n.recs) == 0 {
		return n
	}
	vm := n.recs[0].Source
	for _, r := range n.recs[1:] {
		if r.Source != vm {
			return n
		}
	}
	if run, ok := recsAt(own(vm), n.recs[0].Name); ok && slices.Equal(run, n.recs) {
		n.recs = run
	}
	return n
}

// recsAt returns the run of recs (sorted by Record.Compare) at name, its
// capacity cut so that nothing can append into the rest.
func recsAt(recs []Record, name string) ([]Record, bool) {
	i, found := slices.BinarySearchFunc(recs, name, func(r Record, name string) int { return strings.Compare(r.Name, name) })
	if !found {
		return nil, false
	}
	j := i + 1
	for j < len(recs) && recs[j].Name == name {
		j++
	}
	return recs[i:j:j], true
}

// aliases reports whether recs is a part of the array of in.
func aliases(recs, in []Record) bool {
	if len(recs) == 0 || cap(in) == 0 {
		return false
	}
	p, lo := uintptr(unsafe.Pointer(unsafe.SliceData(recs))), uintptr(unsafe.Pointer(unsafe.SliceData(in)))
	return p >= lo && p < lo+uintptr(cap(in))*unsafe.Sizeof(Record{})
}
