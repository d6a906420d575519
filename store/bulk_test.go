package store

import (
	"bytes"
	"cmp"
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
// records several VMs provide; the VMs planned and the zones built in
// parallel, as for a large commit.
func TestRebuildMatchesEdits(t *testing.T) {
	const z, z2 = "bulk.example.com.", "2.0.192.in-addr.arpa."
	defer func(n, m int) { parallelBuild, parallelPlan = n, m }(parallelBuild, parallelPlan)
	parallelBuild, parallelPlan = 1, 1
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

// TestKeyedCompare checks that the eight-byte digits (digit) order
// strings as strings.Compare does, around the eighth byte, with zero
// bytes, which the padding also uses (equal digits of different strings
// only when one is shorter than eight bytes), and from an offset; and
// that sortKeyed sorts these strings so.
func TestKeyedCompare(t *testing.T) {
	ss := []string{"", "\x00", "a", "a\x00", "a\x00b", "abcdefg", "abcdefgh", "abcdefgh\x00", "abcdefghi",
		"abcdefgi", "abcdefh", "b", "\xff", "\xff\xff\xff\xff\xff\xff\xff\xff\x00", "vm-1.inst.u1", "vm-1.inst.u10",
		"abcdef", "abcdef\x00", "abcdef\x00\x00", "abcdefg\x00", "abcdef\x01", "\x00\x00\x00\x00\x00\x00\x00"}
	for _, x := range ss {
		for _, y := range ss {
			for off := 0; off <= min(len(x), len(y), 3); off++ {
				if x[:off] != y[:off] {
					continue
				}
				got := cmp.Compare(digit(x, off), digit(y, off))
				want := strings.Compare(x[off:], y[off:])
				long := len(x) >= off+digitBytes && len(y) >= off+digitBytes
				if got == 0 && want != 0 && long && x[:off+digitBytes] != y[:off+digitBytes] {
					t.Errorf("digits of %q and %q from %d equal, strings differ within eight bytes", x, y, off)
				}
				if got != 0 && got != want {
					t.Errorf("digits of %q and %q from %d compare %d, strings %d", x, y, off, got, want)
				}
			}
		}
	}
	checkSortKeyed(t, ss)
}

// checkSortKeyed sorts ss with sortKeyed and checks the order against
// strings.Compare, every index once.
func checkSortKeyed(t *testing.T, ss []string) {
	t.Helper()
	ks := make([]keyed, len(ss))
	for i := range ks {
		ks[i] = keyed{pre: uint64(i) * 0x9e3779b97f4a7c15, s: ss[i], i: int32(i)} // pre is overwritten
	}
	sortKeyed(ks)
	seen := make([]bool, len(ss))
	for k, kd := range ks {
		if seen[kd.i] {
			t.Fatalf("index %d twice", kd.i)
		}
		seen[kd.i] = true
		if k > 0 && strings.Compare(ss[ks[k-1].i], ss[kd.i]) > 0 {
			t.Fatalf("%q sorted before %q", ss[ks[k-1].i], ss[kd.i])
		}
	}
}

// TestSortKeyedRandom: sortKeyed orders random strings as strings.Compare
// does, with groups large enough to be sorted digit by digit: strings
// of few bytes (a few zero bytes among them), sharing long prefixes of
// every length, equal ones, and prefixes of one another.
func TestSortKeyedRandom(t *testing.T) {
	for seed := range uint64(200) {
		rng := rand.New(rand.NewPCG(seed, 5))
		alphabet := []string{"\x00", "\x01", "a", "b", "\xff"}[:1+rng.IntN(5)]
		prefixes := []string{""}
		for range rng.IntN(4) {
			p := strings.Repeat("p", rng.IntN(40))
			prefixes = append(prefixes, p, p+"\x00", p+"q")
		}
		ss := make([]string, rng.IntN(3000))
		for i := range ss {
			var b strings.Builder
			b.WriteString(prefixes[rng.IntN(len(prefixes))])
			for range rng.IntN(20) {
				b.WriteString(alphabet[rng.IntN(len(alphabet))])
			}
			ss[i] = b.String()
			if i > 0 && rng.IntN(10) == 0 {
				ss[i] = ss[rng.IntN(i)] // equal to another
			}
		}
		checkSortKeyed(t, ss)
	}
}

// FuzzSortKeyed: sortKeyed orders any strings as strings.Compare does;
// the input is cut into strings at each 0xfe byte, and repeated so that
// groups are sorted digit by digit.
func FuzzSortKeyed(f *testing.F) {
	f.Add([]byte("a\xfeab\xfeabcdefgh\xfeabcdefg\x00\xfe\x00\x00\xfeabcdefghijklmnopq\xfeabcdefghijklmnop"), uint8(3))
	f.Fuzz(func(t *testing.T, data []byte, times uint8) {
		parts := strings.Split(string(data), "\xfe")
		var ss []string
		for k := range 1 + int(times)%20 {
			for i, p := range parts {
				ss = append(ss, p+strings.Repeat("\x00", (i+k)%3))
			}
		}
		checkSortKeyed(t, ss)
	})
}

// TestCanonicalOrderNames: canonicalOrder sorts names as bulkOrder does:
// many names of one zone, with labels sharing long prefixes (UUIDs of
// one account), upper case, escapes, wildcards, the zone's apex, names
// of different label counts, repeated names, names outside the zone and
// names that are not plain (an empty label, a zero byte: checked).
func TestCanonicalOrderNames(t *testing.T) {
	uuid := func(i int) string { return fmt.Sprintf("%08x-0000-4000-8000-%012x", i*7919%50, i%3) }
	for seed := range uint64(60) {
		rng := rand.New(rand.NewPCG(seed, 9))
		zone := []string{"cns.example.com.", "EXAMPLE.com.", "10.in-addr.arpa."}[rng.IntN(3)]
		labels := []string{"*", "a", "A", "inst", "Inst", "web\\.1", "web\\0651", "\\.", "a-b", "web", "web0", "web00", "x\\032y"}
		label := func() string {
			if rng.IntN(3) == 0 {
				return uuid(rng.IntN(200))
			}
			return labels[rng.IntN(len(labels))]
		}
		names := make([]string, 1+rng.IntN(2000))
		plain := seed%3 != 0
		for i := range names {
			ls := make([]string, rng.IntN(5))
			for j := range ls {
				ls[j] = label()
			}
			name := strings.Join(append(ls, zone), ".")
			switch r := rng.IntN(40); {
			case r == 0:
				name = zone
			case r == 1:
				name = "other." + strings.TrimPrefix(zone, "cns.")
			case r == 2 && i > 0:
				name = names[rng.IntN(i)]
			case r == 3 && !plain:
				name = "\x00." + name
			case r == 4 && !plain:
				name = "a.." + zone
			}
			names[i] = name
		}
		order, _, starts := canonicalOrder(len(names), func(i int) string { return names[i] })
		got := make([]string, len(order))
		for k, i := range order {
			got[k] = names[i]
		}
		checkStarts(t, got, starts)
		want := slices.Clone(names)
		slices.SortFunc(want, bulkOrder)
		for k := range got {
			if got[k] != want[k] {
				t.Fatalf("seed %d: at %d %q, want %q", seed, k, got[k], want[k])
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
		order, _, starts := canonicalOrder(len(names), func(i int) string { return names[i] })
		got := make([]string, len(order))
		for k, i := range order {
			got[k] = names[i]
		}
		checkStarts(t, got, starts)
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

// checkStarts fails t unless starts marks exactly the names of sorted
// that differ from the one before.
func checkStarts(t *testing.T, sorted []string, starts []bool) {
	t.Helper()
	if len(starts) != len(sorted) {
		t.Fatalf("%d starts for %d names", len(starts), len(sorted))
	}
	for k := range sorted {
		if want := k == 0 || sorted[k] != sorted[k-1]; starts[k] != want {
			t.Fatalf("at %d (%q after %q): starts %v, want %v", k, sorted[k], sorted[max(k-1, 0)], starts[k], want)
		}
	}
}

// smallDiffListed is smallDiff with the records added listed.
func smallDiffListed(old *nameTree, b bulkNames) (removed, added []Record) {
	removed, changed := smallDiff(old, b)
	return removed, (&bulkAdded{b: b, changed: changed}).records()
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
		sr, sa := smallDiffListed(old, b)
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
		order, _, _ := canonicalOrder(len(names), func(i int) string { return names[i] })
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

// plainName reports whether name is the root or absolute with no empty
// label and no zero byte, as first written, a check of its own: the
// reference for the plain appendKey reports from its pass over the key.
func plainName(name string) bool {
	if name == "." {
		return true
	}
	return len(name) > 1 && name[0] != '.' && name[len(name)-1] == '.' &&
		!strings.Contains(name, "..") && strings.IndexByte(name, 0) < 0
}

// keyByLabels is the canonical key as it was first made, label by label
// from the right: the reference appendKey is checked against.
func keyByLabels(buf []byte, name string) []byte {
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

// FuzzAppendKey: appendKey's key is the label-by-label one, and its
// plain is plainName's, for any string.
func FuzzAppendKey(f *testing.F) {
	for _, name := range []string{".", "", "a", "a.", "..", ".a.", "a..b.", "a.b.c.", "x\x00y.z.", "\x00.", "a.b", ".", "...", "web\\.1.example."} {
		f.Add(name)
	}
	f.Fuzz(func(t *testing.T, name string) {
		got, plain := appendKey([]byte("prefix"), name)
		if want := keyByLabels([]byte("prefix"), name); !bytes.Equal(got, want) {
			t.Fatalf("appendKey(%q) = %q, want %q", name, got, want)
		}
		if plain != plainName(name) {
			t.Fatalf("appendKey(%q) says plain %v, plainName %v", name, plain, plainName(name))
		}
	})
}
