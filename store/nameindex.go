package store

import (
	"bytes"
	"slices"
	"strings"
	"unsafe"
)

// A lookup in a tree of a million names compares the name with about
// twenty keys, each a string of its own elsewhere in memory, and each
// comparison walks the long suffix the names of a zone share
// (".inst.<account uuid>.<zone>") from the right: twenty cache misses and
// more, which made the store's lookup a fifth of a DNS query's CPU at 1M
// records (docs/BENCHMARKS.md, "Issue 18: lookups by word"). So the
// searches of readers (Get, Seek) go through an index a tree node builds
// on first use: the node's keys in canonical form — labels from the
// right, each followed by a zero octet, which orders octet by octet as
// nameOrder orders names — less the prefix they all share, as the eight
// octets after it in one word each. A search then compares words from
// one array, and reads a key only among those whose word equals the
// name's. Nodes are immutable, so an index once built stays right; it is
// built at most a few times over when readers race, which is harmless.

// keyIndex is a tree node's index of its keys.
type keyIndex struct {
	// prefix is the canonical form all the node's keys begin with.
	prefix string
	// words[i] is the canonical form of keys[i] after prefix, its first
	// eight octets big-endian, zero-padded.
	words []uint64
	// plain: some key holds a zero octet, which the canonical form
	// cannot order; searches compare names.
	plain bool
	// Keys of one word make a group, which a search would otherwise
	// tell apart by comparing names: in a leaf of a million-name zone
	// that holds the end of one account and the start of the next, the
	// word is the account UUID's first octets, so half the leaf's keys
	// share it, and each comparison reads a key's string from memory of
	// its own. depth[i] is how many octets of canonical form the group
	// of keys[i] shares (the first and the last key of the group share
	// them, so all do), and deep[i] the eight octets of keys[i] from
	// there, as words. nil when no two keys share a word.
	depth []uint8
	deep  []uint64
}

// canonical appends name's canonical form to b: its labels from the
// right, each followed by a zero octet; ok is false when name is not
// absolute or holds a zero octet of its own or an empty label.
func canonical(b []byte, name string) (_ []byte, ok bool) {
	if !strings.HasSuffix(name, ".") {
		return b, false // relative: the tree holds absolute names only
	}
	name = name[:len(name)-1]
	if strings.IndexByte(name, 0) >= 0 || strings.Contains(name, "..") || strings.HasPrefix(name, ".") {
		return b, false // empty labels: left to nameOrder too
	}
	for end := len(name); end > 0; {
		start := strings.LastIndexByte(name[:end], '.') + 1
		b = append(b, name[start:end]...)
		b = append(b, 0)
		end = start - 1
	}
	return b, true
}

// wordAt returns the eight octets of b from i, big-endian, zero-padded.
func wordAt(b []byte, i int) uint64 {
	var w uint64
	for k := range 8 {
		w <<= 8
		if i+k < len(b) {
			w |= uint64(b[i+k])
		}
	}
	return w
}

// index returns n's index, building it on first use.
func (n *tnode) index() *keyIndex {
	if x := n.idx.Load(); x != nil {
		return x
	}
	x := buildIndex(n.keys)
	n.idx.Store(x)
	return x
}

func buildIndex(keys []string) *keyIndex { return buildIndexOf(keys, nil) }

// buildIndexOf is buildIndex given, when forms is not nil, the canonical
// form of each key (forms[i] of keys[i], every key having one): a bulk
// build has them from sorting the names (canonicalOrder) and need not
// make them again, once for every key and again for each key that shares
// its word with another.
func buildIndexOf(keys, forms []string) *keyIndex {
	if len(keys) == 0 {
		return &keyIndex{plain: true}
	}
	var fb, lb, kb [256]byte
	form := func(b []byte, i int) ([]byte, bool) {
		if forms != nil {
			return unsafe.Slice(unsafe.StringData(forms[i]), len(forms[i])), true // only read
		}
		return canonical(b, keys[i])
	}
	first, okf := form(fb[:0], 0)
	last, okl := form(lb[:0], len(keys)-1)
	if !okf || !okl {
		return &keyIndex{plain: true}
	}
	// Keys are sorted, so what the first and the last share, all share.
	p := 0
	for p < len(first) && p < len(last) && first[p] == last[p] {
		p++
	}
	x := &keyIndex{prefix: string(first[:p]), words: make([]uint64, len(keys))}
	for i := range keys {
		f, ok := form(kb[:0], i)
		if !ok {
			return &keyIndex{plain: true}
		}
		x.words[i] = wordAt(f, p)
	}
	if !x.indexGroups(len(keys), form) {
		return &keyIndex{plain: true}
	}
	return x
}

// indexGroups fills depth and deep for the groups of keys that share
// their word; false when a group's common prefix is too long for depth
// (names of escapes, which presentation form makes longer than 255).
// form(b, i) is key i's canonical form, appended to b.
func (x *keyIndex) indexGroups(keys int, form func(b []byte, i int) ([]byte, bool)) bool {
	var fb, lb, kb [256]byte
	for lo := 0; lo < keys; {
		hi := lo + 1
		for hi < keys && x.words[hi] == x.words[lo] {
			hi++
		}
		if hi-lo > 1 {
			if x.deep == nil {
				x.depth, x.deep = make([]uint8, keys), make([]uint64, keys)
			}
			first, _ := form(fb[:0], lo) // buildIndex checked them all
			last, _ := form(lb[:0], hi-1)
			d := 0
			for d < len(first) && d < len(last) && first[d] == last[d] {
				d++
			}
			if d > 255 {
				return false
			}
			for i := lo; i < hi; i++ {
				f, _ := form(kb[:0], i)
				x.depth[i], x.deep[i] = uint8(d), wordAt(f, d)
			}
		}
		lo = hi
	}
	return true
}

// searchKeys is slices.BinarySearchFunc(n.keys, name, cmpName) through
// n's index; form is name's canonical form (canonical), nil when it has
// none.
func (n *tnode) searchKeys(name string, form []byte) (int, bool) {
	x := n.index()
	if x.plain || form == nil {
		return slices.BinarySearchFunc(n.keys, name, cmpName)
	}
	p := len(x.prefix)
	if len(form) < p || string(form[:p]) != x.prefix {
		// Outside the prefix: before every key or after them all.
		k := 0
		for k < len(form) && k < p && form[k] == x.prefix[k] {
			k++
		}
		if k == len(form) || form[k] < x.prefix[k] {
			return 0, false
		}
		return len(n.keys), false
	}
	w := wordAt(form, p)
	lo, _ := slices.BinarySearch(x.words, w)
	hi := lo
	for hi < len(x.words) && x.words[hi] == w {
		hi++
	}
	if hi-lo > 1 {
		lo, hi = x.searchGroup(n.keys, lo, hi, form)
	}
	if lo == hi {
		return lo, false
	}
	i, found := slices.BinarySearchFunc(n.keys[lo:hi], name, cmpName)
	return lo + i, found
}

// searchGroup narrows the group keys[lo:hi], which share the word of
// form, to the keys that also share the word after the group's common
// prefix, reading one key (for that prefix) instead of comparing names
// over the whole group.
func (x *keyIndex) searchGroup(keys []string, lo, hi int, form []byte) (int, int) {
	d := int(x.depth[lo])
	var kb [256]byte
	first, _ := canonical(kb[:0], keys[lo])
	switch c := bytes.Compare(form[:min(d, len(form))], first[:d]); {
	case c < 0: // a proper prefix of the group's, or before it
		return lo, lo
	case c > 0:
		return hi, hi
	}
	w := wordAt(form, d)
	i, _ := slices.BinarySearch(x.deep[lo:hi], w)
	j := lo + i
	k := j
	for k < hi && x.deep[k] == w {
		k++
	}
	return j, k
}

// childFor is childIndex through n's index.
func (n *tnode) childFor(name string, form []byte) int {
	i, found := n.searchKeys(name, form)
	if found || i == 0 {
		return i
	}
	return i - 1
}

// formOf returns name's canonical form in buf's array when it fits, nil
// when name has none.
func formOf(buf []byte, name string) []byte {
	form, ok := canonical(buf[:0], name)
	if !ok {
		return nil
	}
	return form
}
