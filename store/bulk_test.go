package store

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/cnsd/cnsd/zonegen"
)

// TestRebuildMatchesEdits: a commit that only adds VMs, enough to be
// built in one pass (rebuild), leaves the same zone as the same VMs
// committed one by one (edited name by name), and its diff is exactly
// the change of the served records; with and without a member cap, with
// records several VMs provide; the zones built in parallel, as for a
// large commit.
func TestRebuildMatchesEdits(t *testing.T) {
	const z, z2 = "bulk.example.com.", "2.0.192.in-addr.arpa."
	defer func(n int) { parallelBuild = n }(parallelBuild)
	parallelBuild = 1
	for seed := range uint64(40) {
		maxMembers := []int{0, 2}[seed%2]
		t.Run(fmt.Sprintf("seed=%d,max=%d", seed, maxMembers), func(t *testing.T) {
			rng := rand.New(rand.NewPCG(seed, 7))
			vm := func(i int) zonegen.Contribution {
				id := fmt.Sprintf("%08x-0000-4000-8000-000000000000", i)
				var recs []Record
				for range 1 + rng.IntN(4) {
					name := fmt.Sprintf("n%d.s%d.%s", rng.IntN(5), rng.IntN(3), z)
					recs = append(recs, Record{Name: name, Type: zonegen.TypeA, Data: fmt.Sprintf("10.0.0.%d", rng.IntN(4)), Source: id})
				}
				ptr := Record{Name: fmt.Sprintf("%d.%s", i%7, z2), Type: zonegen.TypePTR, Data: recs[0].Name, Source: id}
				return contrib(id, map[string][]Record{z: recs, z2: {ptr}})
			}
			first := make([]zonegen.Contribution, rng.IntN(4))
			for i := range first {
				first[i] = vm(i)
			}
			then := make([]zonegen.Contribution, 4+rng.IntN(20))
			for i := range then {
				then[i] = vm(100 + i)
			}
			bulk, _ := open(t, NewMemory(), Options{MaxMembers: maxMembers})
			edits, _ := open(t, NewMemory(), Options{MaxMembers: maxMembers})
			if len(first) > 0 {
				commit(t, bulk, first...)
				commit(t, edits, first...)
			}
			before := servedAll(bulk)
			diffs := commit(t, bulk, then...)
			for _, c := range then {
				commit(t, edits, c)
			}
			after := servedAll(bulk)
			if got, want := after, servedAll(edits); !slices.Equal(got, want) {
				t.Fatalf("built in one pass:\n%v\nedited:\n%v", got, want)
			}
			for _, c := range append(first, then...) {
				for _, zone := range []string{z, z2} {
					if got, want := provided(bulk, zone, c.VM), provided(edits, zone, c.VM); !slices.Equal(got, want) {
						t.Fatalf("vm %s provides %v in %s built in one pass, %v edited", c.VM, got, zone, want)
					}
				}
			}
			var removed, added []Record
			for _, r := range before {
				if _, found := slices.BinarySearchFunc(after, r, Record.Compare); !found {
					removed = append(removed, r)
				}
			}
			for _, r := range after {
				if _, found := slices.BinarySearchFunc(before, r, Record.Compare); !found {
					added = append(added, r)
				}
			}
			var dr, da []Record
			for _, d := range diffs {
				dr, da = append(dr, d.Removed...), append(da, d.Added...)
			}
			slices.SortFunc(dr, Record.Compare)
			slices.SortFunc(da, Record.Compare)
			if len(diffs) != 2 || !slices.Equal(dr, removed) || !slices.Equal(da, added) {
				t.Fatalf("diffs %+v, want removed %v, added %v", diffs, removed, added)
			}
		})
	}
}

// servedAll lists the records s serves in the zone, sorted by Record.Compare.
func servedAll(s *Store) []Record {
	var out []Record
	for _, z := range s.Zones() {
		for r := range s.Snapshot(z).All() {
			out = append(out, r)
		}
	}
	slices.SortFunc(out, Record.Compare)
	return out
}

func provided(s *Store, zone, vm string) []Record {
	return slices.Collect(s.Snapshot(zone).Provided(vm))
}

// TestKeyedCompare checks that comparing the eight-byte prefixes first
// orders strings as strings.Compare does, around the eighth byte and
// with zero bytes, which the padding also uses.
func TestKeyedCompare(t *testing.T) {
	ss := []string{"", "\x00", "a", "a\x00", "a\x00b", "abcdefg", "abcdefgh", "abcdefgh\x00", "abcdefghi",
		"abcdefgi", "abcdefh", "b", "\xff", "\xff\xff\xff\xff\xff\xff\xff\xff\x00", "vm-1.inst.u1", "vm-1.inst.u10"}
	for _, x := range ss {
		for _, y := range ss {
			got := keyed{prefix8(x), x, 0}.compare(keyed{prefix8(y), y, 0})
			if want := strings.Compare(x, y); got != want {
				t.Errorf("compare(%q, %q) = %d, want %d", x, y, got, want)
			}
		}
	}
}

// TestCanonicalOrderRepeats: names given more than once (a name several
// VMs provide has a run of each) come out next to each other, in
// nameOrder, also when names that are not absolute make nameOrder find
// different names equal and the order is sorted again.
func TestCanonicalOrderRepeats(t *testing.T) {
	for _, names := range [][]string{
		{"b.x.", "a.x.", "b.x.", "x.", "a.b.x.", "a.x."},
		{"b.x.", "x", "x.", "b.x.", "x", "x."},
	} {
		order := canonicalOrder(len(names), func(i int) string { return names[i] })
		got := make([]string, len(order))
		for k, i := range order {
			got[k] = names[i]
		}
		seen := map[string]bool{}
		for k, name := range got {
			if k > 0 && name != got[k-1] {
				if seen[name] {
					t.Errorf("%q: %q is not next to its repeat: %q", names, name, got)
				}
				if cmpName(got[k-1], name) > 0 {
					t.Errorf("%q: %q before %q: %q", names, got[k-1], name, got)
				}
			}
			seen[name] = true
		}
		if len(got) != len(names) {
			t.Errorf("%q: %d indexes", names, len(got))
		}
	}
}

// TestSmallDiffMatchesWalk: the diff found from the old names alone
// (smallDiff) is exactly the walk's, order included, whatever the two
// zones share: names kept, changed, gone and new, records several VMs
// provide, with and without a member cap.
func TestSmallDiffMatchesWalk(t *testing.T) {
	const z = "bulk.example.com."
	for seed := range uint64(200) {
		rng := rand.New(rand.NewPCG(seed, 11))
		maxMembers := []int{0, 2}[seed%2]
		vms := func(n, base int) map[string][]Record {
			m := map[string][]Record{}
			for i := range n {
				id := fmt.Sprintf("%08x-0000-4000-8000-000000000000", base+rng.IntN(n+5))
				var recs []Record
				for range 1 + rng.IntN(4) {
					name := fmt.Sprintf("n%d.s%d.%s", rng.IntN(4+n/2), rng.IntN(3), z)
					if rng.IntN(3) == 0 {
						name = z
					}
					recs = append(recs, Record{Name: name, Type: zonegen.TypeA, Data: fmt.Sprintf("10.0.0.%d", rng.IntN(4)), Source: id})
				}
				m[id] = normalize(id, append(m[id], recs...))
				_ = i
			}
			return m
		}
		oldB := buildBulk(maxMembers, vms(1+rng.IntN(6), 0))
		old := buildNameTree(oldB.names, oldB.nodes)
		b := buildBulk(maxMembers, vms(10+rng.IntN(60), rng.IntN(3)))
		wr, wa := walkDiff(old, b)
		sr, sa := smallDiff(old, b)
		if !slices.Equal(sr, wr) || !slices.Equal(sa, wa) {
			t.Fatalf("seed %d: smallDiff removed %v added %v\nwalk removed %v added %v", seed, sr, sa, wr, wa)
		}
		if (sr == nil) != (wr == nil) || (sa == nil) != (wa == nil) {
			t.Fatalf("seed %d: smallDiff gives nil %v/%v, the walk %v/%v", seed, sr == nil, sa == nil, wr == nil, wa == nil)
		}
	}
}

// TestCanonicalOrderRandom: canonicalOrder sorts random names by
// bulkOrder (nameOrder, then bytes), so equal names are next to each
// other: plain names (plainName), whose keys it trusts without a check,
// and names with empty labels, zero bytes, escaped dots, no final dot or
// the root, which it checks.
func TestCanonicalOrderRandom(t *testing.T) {
	plainLabels := []string{"a", "b", "ab", "a-", "ba", "z", "0", "aa", "\xff", "a\\.b"}
	oddLabels := append(slices.Clone(plainLabels), "", "\x00", "a\x00", "\x00a", "\\.")
	for seed := range uint64(300) {
		rng := rand.New(rand.NewPCG(seed, 3))
		labels, plainOnly := plainLabels, seed%2 == 0
		if !plainOnly {
			labels = oddLabels
		}
		names := make([]string, 1+rng.IntN(60))
		for i := range names {
			ls := make([]string, rng.IntN(4))
			for j := range ls {
				ls[j] = labels[rng.IntN(len(labels))]
			}
			name := strings.Join(append(ls, "x", ""), ".")
			switch {
			case !plainOnly && rng.IntN(8) == 0:
				name = strings.TrimSuffix(name, ".")
			case rng.IntN(20) == 0:
				name = "."
			}
			names[i] = name
		}
		if plainOnly {
			for _, name := range names {
				if !plainName(name) {
					t.Fatalf("seed %d: %q is not plain", seed, name)
				}
			}
		}
		order := canonicalOrder(len(names), func(i int) string { return names[i] })
		if len(order) != len(names) {
			t.Fatalf("seed %d: %d indexes for %d names", seed, len(order), len(names))
		}
		for k := 1; k < len(order); k++ {
			if a, b := names[order[k-1]], names[order[k]]; bulkOrder(a, b) > 0 {
				t.Fatalf("seed %d: %q before %q", seed, a, b)
			}
		}
	}
}
