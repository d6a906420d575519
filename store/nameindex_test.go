package store

import (
	"math/rand"
	"slices"
	"strings"
	"testing"
)

// indexNames returns n random names shaped to stress the index: long
// shared suffixes, labels that are prefixes of others, escapes, capitals,
// empty labels and zero octets (which the index leaves to nameOrder).
func indexNames(rng *rand.Rand, n int) []string {
	labels := []string{"a", "ab", "abc", "b", "inst", "svc", "00000000-0000-4000-8000-000000000001",
		"00000000-0000-4000-8000-000000000002", "0000000", "00000000", "000000000", "x\\.y", "Z", "\x01", "\xff", "-"}
	suffixes := []string{"cns.bench.test.", "inst.a11ce000-0000-4000-8000-000000000001.cns.bench.test.",
		"inst.b0b00000-0000-4000-8000-000000000002.cns.bench.test.", "10.in-addr.arpa.", "."}
	out := make([]string, n)
	for i := range out {
		var ls []string
		for range rng.Intn(4) {
			ls = append(ls, labels[rng.Intn(len(labels))])
		}
		suffix := suffixes[rng.Intn(len(suffixes))]
		name := strings.Join(ls, ".")
		switch {
		case name == "":
			name = suffix
		case suffix == ".":
			name += "."
		default:
			name += "." + suffix
		}
		switch rng.Intn(50) {
		case 0:
			name = "a..b." + suffix
		case 1:
			name = "a\x00b." + suffix
		}
		out[i] = name
	}
	return out
}

// zoneNames returns n names shaped like a large zone's: instances and
// services under accounts, whose leaves hold the end of one account and
// the start of the next (keys that share a word and differ only dozens
// of octets further, keyIndex.deep), with hex labels that are prefixes
// of one another and names one label longer than others.
func zoneNames(rng *rand.Rand, n int) []string {
	hex := func(k int) string {
		const digits = "0123456789abcdef"
		b := make([]byte, k)
		for i := range b {
			b[i] = digits[rng.Intn(3)] // few digits: long shared runs
		}
		return string(b)
	}
	accounts := make([]string, 1+rng.Intn(8))
	for i := range accounts {
		accounts[i] = hex(12) + "-0000-4000-8000-" + hex(12)
	}
	out := make([]string, n)
	for i := range out {
		acct := accounts[rng.Intn(len(accounts))] + ".cns.bench.test."
		switch rng.Intn(6) {
		case 0:
			out[i] = "svc" + hex(1) + ".svc." + acct
		case 1:
			out[i] = "_http._tcp.svc" + hex(1) + ".svc." + acct
		case 2:
			out[i] = "x" + hex(rng.Intn(10)) + ".inst." + acct
		case 3:
			out[i] = acct
		default:
			out[i] = hex(1+rng.Intn(12)) + ".inst." + acct
		}
	}
	return out
}

// TestIndexedSearchMatchesNameOrder: Get and Seek, which search through
// the nodes' indexes, find what a binary search of the sorted names by
// nameOrder finds, in trees built in one pass and name by name.
func TestIndexedSearchMatchesNameOrder(t *testing.T) {
	rng := rand.New(rand.NewSource(7))
	for round := range 80 {
		gen := indexNames
		if round%2 == 1 {
			gen = zoneNames
		}
		names := gen(rng, 1+rng.Intn(3000))
		slices.SortFunc(names, cmpName)
		names = slices.CompactFunc(names, func(a, b string) bool { return cmpName(a, b) == 0 })
		nodes := make([]*node, len(names))
		for i := range nodes {
			nodes[i] = &node{}
		}
		built := buildNameTree(names, nodes)
		if round%2 == 1 && len(names) > 4*treeFanout && !anyDeep(built.root) {
			t.Fatalf("round %d: no node of %d zone-shaped names has a group of keys sharing a word: the test misses searchGroup", round, len(names))
		}
		var set *nameTree
		for _, i := range rng.Perm(len(names)) {
			set = set.Set(names[i], nodes[i])
		}
		queries := append(gen(rng, 2000), names...)
		for _, tree := range []*nameTree{built, set} {
			for _, q := range queries {
				i, found := slices.BinarySearchFunc(names, q, cmpName)
				n, ok := tree.Get(q)
				if ok != found || ok && n != nodes[i] {
					t.Fatalf("round %d: Get(%q) = %p, %v; want %v (index %d)", round, q, n, ok, found, i)
				}
				it := tree.Iterator()
				it.Seek(q)
				got, _, more := it.Next()
				if more != (i < len(names)) || more && got != names[i] {
					t.Fatalf("round %d: Seek(%q) then Next = %q, %v; want the name at %d of %d", round, q, got, more, i, len(names))
				}
				n, ok, next := tree.getOrNext(q)
				var want string
				if !found && i < len(names) {
					want = names[i]
				}
				if ok != found || ok && n != nodes[i] || next != want {
					t.Fatalf("round %d: getOrNext(%q) = %p, %v, %q; want %v, %q", round, q, n, ok, next, found, want)
				}
			}
		}
	}
}

// anyDeep reports whether some node under n has keys that share a word.
func anyDeep(n *tnode) bool {
	if n.index().deep != nil {
		return true
	}
	for _, k := range n.kids {
		if anyDeep(k) {
			return true
		}
	}
	return false
}

// TestLookupExists: one search answers as Lookup then HasDescendants do,
// in trees edited name by name (Set and Delete) as well as built at once.
func TestLookupExists(t *testing.T) {
	rng := rand.New(rand.NewSource(11))
	for round := range 20 {
		gen := indexNames
		if round%2 == 1 {
			gen = zoneNames
		}
		pool := gen(rng, 1+rng.Intn(2000))
		tree := &nameTree{}
		for _, name := range pool {
			var recs []Record
			if rng.Intn(8) > 0 {
				recs = []Record{{Name: name}}
			}
			if rng.Intn(4) == 0 {
				tree = tree.Delete(name)
			} else {
				tree = tree.Set(name, &node{recs: recs})
			}
		}
		s := &Snapshot{names: tree}
		queries := append(gen(rng, 1000), pool...)
		for _, q := range queries {
			want := s.Lookup(q)
			wantExists := len(want) > 0 || s.HasDescendants(q)
			got, exists := s.LookupExists(q)
			if !slices.Equal(got, want) || exists != wantExists {
				t.Fatalf("round %d: LookupExists(%q) = %d records, %v; want %d, %v", round, q, len(got), exists, len(want), wantExists)
			}
		}
	}
}

// FuzzCanonicalOrder: where two names have canonical forms, the forms
// order as nameOrder orders the names.
func FuzzCanonicalOrder(f *testing.F) {
	f.Add("a.example.", "ab.example.")
	f.Add("example.", "a.example.")
	f.Add(".", "a.")
	f.Add("x\\.y.z.", "x.y.z.")
	f.Add("A.b.", "a.b.")
	f.Fuzz(func(t *testing.T, a, b string) {
		fa, oka := canonical(nil, a)
		fb, okb := canonical(nil, b)
		if !oka || !okb {
			return
		}
		want := cmpName(a, b)
		if got := strings.Compare(string(fa), string(fb)); (got < 0) != (want < 0) || (got > 0) != (want > 0) {
			t.Fatalf("canonical forms of %q and %q compare %d, nameOrder %d", a, b, got, want)
		}
	})
}
