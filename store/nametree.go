package store

import (
	"iter"
	"slices"
	"sync/atomic"
)

// nameTree is a snapshot's names: an immutable sorted map from names, in
// DNS canonical order (nameOrder), to their nodes. It is a B+tree whose
// Set and Delete copy only the path to the one leaf they change, so a
// new snapshot shares every other leaf with the one it came from; and,
// unlike a map built insertion by insertion, it is built in one pass
// from names already sorted (buildNameTree), which is what a bootstrap
// of a million names needs (docs/BENCHMARKS.md, "pipeline: bootstrap").
// A nil or zero nameTree is empty. Safe for concurrent reading.
type nameTree struct {
	root *tnode
	size int
}

// treeFanout is the most entries of a leaf and children of a branch.
const treeFanout = 32

// tnode is a leaf (kids nil: names and their nodes) or a branch (kids,
// and in keys each child's least name). A published tnode is never
// modified: updates copy it.
type tnode struct {
	keys []string
	vals []*node
	kids []*tnode
	idx  atomic.Pointer[keyIndex] // built by the first search that reads it (nameindex.go)
}

func cmpName(a, b string) int { return nameOrder{}.Compare(a, b) }

// childIndex is the child of branch n whose names would hold name.
func (n *tnode) childIndex(name string) int {
	i, found := slices.BinarySearchFunc(n.keys, name, cmpName)
	if found || i == 0 {
		return i
	}
	return i - 1
}

// Len returns the number of names.
func (t *nameTree) Len() int {
	if t == nil {
		return 0
	}
	return t.size
}

// Get returns name's node.
func (t *nameTree) Get(name string) (*node, bool) {
	if t == nil || t.root == nil {
		return nil, false
	}
	var buf [256]byte
	form := formOf(buf[:], name)
	n := t.root
	for n.kids != nil {
		n = n.kids[n.childFor(name, form)]
	}
	if i, found := n.searchKeys(name, form); found {
		return n.vals[i], true
	}
	return nil, false
}

// getOrNext returns name's node; or, when name is not in the tree, the
// first name after it ("" when none): a negative answer needs both, and
// one descent finds both, since a branch's next key is the least name
// after the child it descends into.
func (t *nameTree) getOrNext(name string) (_ *node, found bool, next string) {
	if t == nil || t.root == nil {
		return nil, false, ""
	}
	var buf [256]byte
	form := formOf(buf[:], name)
	n := t.root
	for n.kids != nil {
		i := n.childFor(name, form)
		if i+1 < len(n.keys) {
			next = n.keys[i+1]
		}
		n = n.kids[i]
	}
	i, found := n.searchKeys(name, form)
	if found {
		return n.vals[i], true, ""
	}
	if i < len(n.keys) {
		next = n.keys[i]
	}
	return nil, false, next
}

// Set returns a tree where name holds v.
func (t *nameTree) Set(name string, v *node) *nameTree {
	if t.Len() == 0 {
		return &nameTree{root: &tnode{keys: []string{name}, vals: []*node{v}}, size: 1}
	}
	root, split, added := t.root.set(name, v)
	if split != nil {
		root = &tnode{keys: []string{root.keys[0], split.keys[0]}, kids: []*tnode{root, split}}
	}
	size := t.size
	if added {
		size++
	}
	return &nameTree{root: root, size: size}
}

func (n *tnode) set(name string, v *node) (c, split *tnode, added bool) {
	if n.kids == nil {
		i, found := slices.BinarySearchFunc(n.keys, name, cmpName)
		if found {
			// The key too is the new one: the old string may hold a
			// whole arena chunk of replaced records (journal.go).
			c = &tnode{keys: slices.Clone(n.keys), vals: slices.Clone(n.vals)}
			c.keys[i], c.vals[i] = name, v
			return c, nil, false
		}
		c = &tnode{keys: insertAt(n.keys, i, name), vals: insertAt(n.vals, i, v)}
		c, split = c.splitFull()
		return c, split, true
	}
	i := n.childIndex(name)
	kid, kidSplit, added := n.kids[i].set(name, v)
	c = &tnode{keys: slices.Clone(n.keys), kids: slices.Clone(n.kids)}
	c.keys[i], c.kids[i] = kid.keys[0], kid
	if kidSplit != nil {
		c.keys, c.kids = insertAt(c.keys, i+1, kidSplit.keys[0]), insertAt(c.kids, i+1, kidSplit)
	}
	c, split = c.splitFull()
	return c, split, added
}

// splitFull splits a node over treeFanout in halves. The halves share
// n's arrays, which nothing modifies in place.
func (n *tnode) splitFull() (*tnode, *tnode) {
	if len(n.keys) <= treeFanout {
		return n, nil
	}
	h := len(n.keys) / 2
	left, right := &tnode{keys: n.keys[:h:h]}, &tnode{keys: n.keys[h:]}
	if n.kids == nil {
		left.vals, right.vals = n.vals[:h:h], n.vals[h:]
	} else {
		left.kids, right.kids = n.kids[:h:h], n.kids[h:]
	}
	return left, right
}

// Delete returns a tree without name.
func (t *nameTree) Delete(name string) *nameTree {
	if t.Len() == 0 {
		return t
	}
	root, removed := t.root.del(name)
	if !removed {
		return t
	}
	for root != nil && root.kids != nil && len(root.kids) == 1 {
		root = root.kids[0]
	}
	return &nameTree{root: root, size: t.size - 1}
}

// del returns n without name (nil when nothing is left), and whether
// name was there. Nodes are not merged: one emptied is removed.
func (n *tnode) del(name string) (*tnode, bool) {
	if n.kids == nil {
		i, found := slices.BinarySearchFunc(n.keys, name, cmpName)
		switch {
		case !found:
			return n, false
		case len(n.keys) == 1:
			return nil, true
		}
		return &tnode{keys: slices.Delete(slices.Clone(n.keys), i, i+1), vals: slices.Delete(slices.Clone(n.vals), i, i+1)}, true
	}
	i := n.childIndex(name)
	kid, removed := n.kids[i].del(name)
	switch {
	case !removed:
		return n, false
	case kid == nil && len(n.kids) == 1:
		return nil, true
	case kid == nil:
		return &tnode{keys: slices.Delete(slices.Clone(n.keys), i, i+1), kids: slices.Delete(slices.Clone(n.kids), i, i+1)}, true
	}
	c := &tnode{keys: slices.Clone(n.keys), kids: slices.Clone(n.kids)}
	c.keys[i], c.kids[i] = kid.keys[0], kid
	return c, true
}

// insertAt returns a new slice: s with v inserted at i.
func insertAt[T any](s []T, i int, v T) []T {
	out := make([]T, len(s)+1)
	copy(out, s[:i])
	out[i] = v
	copy(out[i+1:], s[i:])
	return out
}

// buildNameTree builds the tree of names, sorted by nameOrder without
// duplicates, and their nodes, in one pass: full leaves, then each level
// of branches over the one below. The tree keeps neither slice.
func buildNameTree(names []string, nodes []*node) *nameTree {
	return buildNameTreeOf(names, nodes, nil)
}

// buildNameTreeOf is buildNameTree given, when forms is not nil, each
// name's canonical form (forms[i] of names[i]) for the indexes
// (buildIndexOf); the tree keeps none of them.
func buildNameTreeOf(names []string, nodes []*node, forms []string) *nameTree {
	if len(names) == 0 {
		return &nameTree{}
	}
	level := make([]*tnode, 0, (len(names)+treeFanout-1)/treeFanout)
	for i := 0; i < len(names); i += treeFanout {
		j := min(i+treeFanout, len(names))
		leaf := &tnode{keys: slices.Clone(names[i:j]), vals: slices.Clone(nodes[i:j])}
		// Indexed now rather than by the first searches: a tree this
		// size is a bootstrap's, and its first queries need not pay.
		var leafForms []string
		if forms != nil {
			leafForms = forms[i:j]
		}
		leaf.idx.Store(buildIndexOf(leaf.keys, leafForms))
		level = append(level, leaf)
	}
	for len(level) > 1 {
		up := make([]*tnode, 0, (len(level)+treeFanout-1)/treeFanout)
		for i := 0; i < len(level); i += treeFanout {
			kids := slices.Clone(level[i:min(i+treeFanout, len(level))])
			keys := make([]string, len(kids))
			for k, kid := range kids {
				keys[k] = kid.keys[0]
			}
			branch := &tnode{keys: keys, kids: kids}
			branch.idx.Store(buildIndex(keys))
			up = append(up, branch)
		}
		level = up
	}
	return &nameTree{root: level[0], size: len(names)}
}

// leaves yields the nodes of each leaf in order.
func (t *nameTree) leaves() iter.Seq[[]*node] {
	return func(yield func([]*node) bool) {
		if t.Len() > 0 {
			t.root.walk(yield)
		}
	}
}

// walk yields the nodes of n's leaves in order; false when yield asked
// to stop.
func (n *tnode) walk(yield func([]*node) bool) bool {
	if n.kids == nil {
		return yield(n.vals)
	}
	for _, kid := range n.kids {
		if !kid.walk(yield) {
			return false
		}
	}
	return true
}

// nameIter walks a nameTree in order.
type nameIter struct {
	path []iterStep // from the root to the current leaf
}

type iterStep struct {
	n *tnode
	i int
}

// Iterator returns an iterator at the first name.
func (t *nameTree) Iterator() *nameIter {
	it := &nameIter{}
	if t.Len() > 0 {
		it.path = append(it.path, iterStep{n: t.root})
		it.settle()
	}
	return it
}

// Seek moves the iterator to the first name at or after name.
func (it *nameIter) Seek(name string) {
	if len(it.path) == 0 {
		return
	}
	root := it.path[0].n
	it.path = it.path[:0]
	var buf [256]byte
	form := formOf(buf[:], name)
	for n := root; ; {
		if n.kids == nil {
			i, _ := n.searchKeys(name, form)
			it.path = append(it.path, iterStep{n: n, i: i})
			break
		}
		i := n.childFor(name, form)
		it.path = append(it.path, iterStep{n: n, i: i})
		n = n.kids[i]
	}
	it.settle()
}

// settle moves the position down to a leaf entry: from a branch to the
// first entry under its current child, and from past the end of a leaf
// to the next leaf's first entry; it empties the path at the end.
func (it *nameIter) settle() {
	for len(it.path) > 0 {
		top := &it.path[len(it.path)-1]
		if top.i < len(top.n.keys) {
			if top.n.kids == nil {
				return
			}
			it.path = append(it.path, iterStep{n: top.n.kids[top.i]})
			continue
		}
		it.path = it.path[:len(it.path)-1]
		if len(it.path) > 0 {
			it.path[len(it.path)-1].i++
		}
	}
}

// Done reports whether the iterator is past the last name.
func (it *nameIter) Done() bool { return len(it.path) == 0 }

// Next returns the current name and node and moves on; ok is false at
// the end.
func (it *nameIter) Next() (name string, n *node, ok bool) {
	if it.Done() {
		return "", nil, false
	}
	top := &it.path[len(it.path)-1]
	name, n = top.n.keys[top.i], top.n.vals[top.i]
	top.i++
	it.settle()
	return name, n, true
}

// Replace returns a tree where names, sorted by nameOrder without
// duplicates, hold vals (the same index), copying the path to each leaf
// once however many of its names change, rather than once per name as
// Set does. It only replaces: ok is false, and the tree unchanged, when
// a name is not in t.
func (t *nameTree) Replace(names []string, vals []*node) (_ *nameTree, ok bool) {
	if len(names) == 0 {
		return t, true
	}
	if t.Len() == 0 {
		return t, false
	}
	root, ok := t.root.replace(names, vals)
	if !ok {
		return t, false
	}
	return &nameTree{root: root, size: t.size}, true
}

func (n *tnode) replace(names []string, vals []*node) (*tnode, bool) {
	if n.kids == nil {
		c := &tnode{keys: slices.Clone(n.keys), vals: slices.Clone(n.vals)}
		for k, name := range names {
			i, found := slices.BinarySearchFunc(c.keys, name, cmpName)
			if !found {
				return nil, false
			}
			c.keys[i], c.vals[i] = name, vals[k] // the new key, as in set
		}
		return c, true
	}
	c := &tnode{keys: slices.Clone(n.keys), kids: slices.Clone(n.kids)}
	for lo := 0; lo < len(names); {
		i, hi := n.childIndex(names[lo]), lo+1
		for hi < len(names) && n.childIndex(names[hi]) == i {
			hi++
		}
		kid, ok := n.kids[i].replace(names[lo:hi], vals[lo:hi])
		if !ok {
			return nil, false
		}
		c.keys[i], c.kids[i] = kid.keys[0], kid
		lo = hi
	}
	return c, true
}
