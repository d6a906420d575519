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

// TestIndexedSearchMatchesNameOrder: Get and Seek, which search through
// the nodes' indexes, find what a binary search of the sorted names by
// nameOrder finds, in trees built in one pass and name by name.
func TestIndexedSearchMatchesNameOrder(t *testing.T) {
	rng := rand.New(rand.NewSource(7))
	for round := range 40 {
		names := indexNames(rng, 1+rng.Intn(3000))
		slices.SortFunc(names, cmpName)
		names = slices.CompactFunc(names, func(a, b string) bool { return cmpName(a, b) == 0 })
		nodes := make([]*node, len(names))
		for i := range nodes {
			nodes[i] = &node{}
		}
		built := buildNameTree(names, nodes)
		var set *nameTree
		for _, i := range rng.Perm(len(names)) {
			set = set.Set(names[i], nodes[i])
		}
		queries := append(indexNames(rng, 2000), names...)
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
