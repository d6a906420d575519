package store

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"path/filepath"
	"reflect"
	"runtime"
	"slices"
	"testing"

	"github.com/cnsd/cnsd/zonegen"
)

// randomBulkVMs returns n VMs' records in zone, shaped to try
// encodedAtLeast: UUID sources found inside names and data (cut out by
// the encoding), names outside the zone and the apex, names several VMs
// share with the same and with other records, PTR data naming the VM.
func randomBulkVMs(rng *rand.Rand, zone string, n, base int) map[string][]Record {
	m := map[string][]Record{}
	for i := range n {
		id := fmt.Sprintf("%08x-0000-4000-8000-%012x", base+rng.IntN(n+5), i%7)
		var recs []Record
		for range 1 + rng.IntN(5) {
			var name string
			switch rng.IntN(6) {
			case 0:
				name = zone
			case 1:
				name = id + ".inst.acct" + fmt.Sprint(rng.IntN(3)) + "." + zone
			case 2:
				name = "outside" + fmt.Sprint(rng.IntN(3)) + ".other.example."
			case 3:
				name = "x" + id + "y.svc." + zone
			default:
				name = fmt.Sprintf("web%d.svc.%s", rng.IntN(4), zone)
			}
			r := Record{Name: name, Type: zonegen.TypeA, Data: fmt.Sprintf("10.0.%d.%d", rng.IntN(2), rng.IntN(4)), Source: id}
			switch rng.IntN(4) {
			case 0:
				r.Type, r.Data = zonegen.TypeTXT, "\""+id+"\""
			case 1:
				r.Type, r.Data = zonegen.TypePTR, "a"+id+".inst."+zone
			}
			recs = append(recs, r)
		}
		m[id] = normalize(id, append(m[id], recs...))
	}
	return m
}

// addedBytes is how many bytes EncodeDiff spends on d's records added:
// the encoding of d less that of d without them.
func addedBytes(d Diff) int {
	without := d
	without.Added = nil
	return len(EncodeDiff(d)) - len(EncodeDiff(without)) -
		(len(binary.AppendUvarint(nil, uint64(len(d.Added)))) - 1)
}

// TestBulkAddedAtLeast: encodedAtLeast never exceeds the bytes the
// encoding really spends on the records added, for zones built from
// nothing and from a few names (the records removed before them carry
// their last name and source over), and the listing and count of
// bulkAdded agree with the walk's diff.
func TestBulkAddedAtLeast(t *testing.T) {
	const zone = "bulk.example.com."
	for seed := range uint64(300) {
		rng := rand.New(rand.NewPCG(seed, 21))
		old := buildNameTree(nil, nil)
		if seed%2 == 1 {
			ob := buildBulk(0, randomBulkVMs(rng, zone, 1+rng.IntN(2), 0))
			old = buildNameTree(ob.names, ob.nodes)
		}
		b := buildBulk(rng.IntN(3), randomBulkVMs(rng, zone, 60+rng.IntN(60), rng.IntN(3)))
		removed, listed, later := diffBulk(old, b)
		if later == nil || listed != nil {
			t.Fatalf("seed %d: %d old names, %d new: diffBulk listed the records added", seed, old.Len(), len(b.names))
		}
		added := later.records()
		wr, wa := walkDiff(old, b)
		if !slices.Equal(removed, wr) || !slices.Equal(added, wa) {
			t.Fatalf("seed %d: diffBulk removed %v added %v\nwalk removed %v added %v", seed, removed, added, wr, wa)
		}
		if later.count() != len(added) {
			t.Fatalf("seed %d: count %d, %d records listed", seed, later.count(), len(added))
		}
		d := Diff{Zone: zone, From: 1, To: 2, Removed: removed, Added: added}
		full, real := later.encodedAtLeast(zone, math.MaxInt), addedBytes(d)
		if full > real {
			t.Fatalf("seed %d: encodedAtLeast %d, the encoding spends %d bytes on %d records added after %d removed",
				seed, full, real, len(added), len(removed))
		}
		// Told to stop past enough, it still tells whether the bound
		// is past enough, and stays a bound.
		enough := rng.IntN(full + 1)
		if got := later.encodedAtLeast(zone, enough); got > full || (got <= enough) != (full <= enough) {
			t.Fatalf("seed %d: encodedAtLeast stopping past %d gave %d, the whole bound %d", seed, enough, got, full)
		}
	}
}

// TestBulkAddedAtLeastCNS: for cnsd's own names the bound is most of the
// real size, so that a bootstrap's zone is seen to be too large for the
// journal without being listed: at least half of it.
func TestBulkAddedAtLeastCNS(t *testing.T) {
	const zone = "dc1.cns.example.com."
	vms := map[string][]Record{}
	for i := range 2000 {
		c := cnsVM(i)
		if recs := byZone(c)[zone]; len(recs) > 0 {
			vms[c.VM] = recs
		}
	}
	b := buildBulk(0, vms)
	later := &bulkAdded{b: b}
	d := Diff{Zone: zone, From: 1, To: 2, Added: later.records()}
	got, real := later.encodedAtLeast(zone, math.MaxInt), addedBytes(d)
	if got > real || 2*got < real {
		t.Fatalf("encodedAtLeast %d for %d bytes encoded (%d records): want between half and all of it", got, real, len(d.Added))
	}
}

// TestBootstrapDiffLeftUnlisted: a commit building a zone whose diff the
// journal cannot keep leaves the records it adds unlisted in the change
// the Batcher gets (and the backend, told to keep no journal), yet
// Commit returns the diff whole, equal to the one a journal large enough
// keeps; the counts agree. A zone whose diff fits keeps it, listed.
func TestBootstrapDiffLeftUnlisted(t *testing.T) {
	var batch []zonegen.Contribution
	for i := range 300 {
		batch = append(batch, cnsVM(i))
	}
	const big, small = "dc1.cns.example.com.", "0.10.in-addr.arpa."
	ctx := context.Background()

	roomy, _ := open(t, NewMemory(), Options{})
	want := map[string]Diff{}
	for _, d := range commit(t, roomy, batch...) {
		want[d.Zone] = d
	}
	if roomy.Snapshot(big).journal == nil {
		t.Fatalf("%s: a journal of 16 MiB kept no diff of 300 VMs", big)
	}

	// 4 KiB: no zone of 300 VMs keeps its diff (the reverse zone's
	// PTR records name the VMs' instance names, ~60 bytes each); the
	// zone of one record does.
	tight, _ := open(t, NewMemory(), Options{JournalBytes: 4 << 10})
	diffs := commit(t, tight, batch...)
	if len(diffs) != len(want) {
		t.Fatalf("Commit returned %d diffs, want %d", len(diffs), len(want))
	}
	for _, d := range diffs {
		w := want[d.Zone]
		if !slices.Equal(d.Added, w.Added) || !slices.Equal(d.Removed, w.Removed) || d.From != w.From || d.To != w.To {
			t.Fatalf("%s: Commit's diff with a tight journal differs: %d added, want %d", d.Zone, len(d.Added), len(w.Added))
		}
		if tight.Snapshot(d.Zone).journal != nil {
			t.Errorf("%s: the journal kept a diff of %d records under 4 KiB", d.Zone, len(d.Added))
		}
	}

	// The Batcher's path: the change carries the records unlisted.
	mem := NewMemory()
	s, _ := open(t, mem, Options{JournalBytes: 4 << 10})
	changes, _, err := s.commitRecorded(ctx, append(batch, contrib("00000000-0000-4000-8000-00000000ffff",
		map[string][]Record{"lone.example.com.": {a("lone.example.com.", "10.9.9.9", "00000000-0000-4000-8000-00000000ffff")}})))
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	for i := range changes {
		c := &changes[i]
		seen[c.Zone] = true
		added, removed := c.counts()
		switch c.Zone {
		case big:
			if c.addedLater == nil || c.Diff.Added != nil || c.KeepJournal != 0 || c.diffEnc != nil {
				t.Errorf("%s: records listed %d, later %v, journal kept %d: want the diff left unlisted and no journal",
					c.Zone, len(c.Diff.Added), c.addedLater != nil, c.KeepJournal)
			}
			if added != len(want[big].Added) || removed != 0 {
				t.Errorf("%s: counts +%d -%d, want +%d -0", c.Zone, added, removed, len(want[big].Added))
			}
			if d := c.diff(); !slices.Equal(d.Added, want[big].Added) {
				t.Errorf("%s: the diff listed later differs from Commit's", c.Zone)
			}
		case "lone.example.com.":
			if c.addedLater != nil || len(c.Diff.Added) != 1 || c.KeepJournal != 1 {
				t.Errorf("%s: later %v, %d listed, journal %d: want the one record listed and kept", c.Zone, c.addedLater != nil, len(c.Diff.Added), c.KeepJournal)
			}
		}
	}
	if !seen[big] || !seen[small] {
		t.Fatalf("zones changed %v, want %s and %s among them", seen, big, small)
	}
	data, err := mem.Load(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	if n := len(data[big].Journal); n != 0 {
		t.Errorf("%s: the backend keeps %d journal entries, want none", big, n)
	}
	if n := len(data["lone.example.com."].Journal); n != 1 {
		t.Errorf("lone.example.com.: the backend keeps %d journal entries, want 1", n)
	}
}

// TestBulkAddedAtLeastTerms pins encodedAtLeast's terms on a diff worked
// out by hand, in zone "z." (suffix ".z."), sources "v1" and "v2":
//
//	a.z.    A   1.2.3.4  v1   5 headers and type, data 7, name "a" 1   = 13
//	a.z.    A   1.2.3.5  v2   5, data 7, a source other than v1's 2    = 14
//	v1.b.z. TXT x v1 y   v1   5, data cut 1+6-2, name "v1.b" cut 4-2   = 12
//
// 39 in all; EncodeDiff spends 44 (each first source in full, 2 bytes
// more twice, and the name's cut position, 1). When old served a.z.
// (changed), the last record removed may be at a.z.: its name counts a
// header byte only, 38.
func TestBulkAddedAtLeastTerms(t *testing.T) {
	const zone = "z."
	vms := map[string][]Record{
		"v1": {a("a.z.", "1.2.3.4", "v1"), {Name: "v1.b.z.", Type: zonegen.TypeTXT, Data: "x v1 y", Source: "v1"}},
		"v2": {a("a.z.", "1.2.3.5", "v2")},
	}
	b := buildBulk(0, vms)
	fresh := &bulkAdded{b: b}
	d := Diff{Zone: zone, Added: fresh.records()}
	if got, real := fresh.encodedAtLeast(zone, math.MaxInt), addedBytes(d); got != 39 || real != 44 {
		t.Errorf("from nothing: encodedAtLeast %d, encoding %d; want 39 and 44", got, real)
	}
	ob := buildBulk(0, map[string][]Record{"v3": {a("a.z.", "9.9.9.9", "v3")}})
	old := buildNameTree(ob.names, ob.nodes)
	removed, changed := smallDiff(old, b)
	after := &bulkAdded{b: b, changed: changed}
	d = Diff{Zone: zone, Removed: removed, Added: after.records()}
	if got, real := after.encodedAtLeast(zone, math.MaxInt), addedBytes(d); got != 38 || real != 43 {
		t.Errorf("after a.z. was served: encodedAtLeast %d, encoding %d; want 38 and 43", got, real)
	}
}

// TestLatest: a batch's last contribution of each VM, in the order VMs
// first appear, without the unresolved ones; a batch sorted by VM with
// no VM twice (the Batcher's) comes back as it is.
func TestLatest(t *testing.T) {
	c := func(vm string, tag int, unresolved bool) zonegen.Contribution {
		return zonegen.Contribution{VM: vm, Unresolved: unresolved, Zones: make([]zonegen.ZoneRecords, tag)}
	}
	for _, tc := range []struct {
		name      string
		batch     []zonegen.Contribution
		want      []zonegen.Contribution
		unchanged bool
	}{
		{"sorted", []zonegen.Contribution{c("a", 1, false), c("b", 2, false), c("c", 3, false)},
			[]zonegen.Contribution{c("a", 1, false), c("b", 2, false), c("c", 3, false)}, true},
		{"sorted, unresolved", []zonegen.Contribution{c("a", 1, false), c("b", 2, true), c("c", 3, false)},
			[]zonegen.Contribution{c("a", 1, false), c("c", 3, false)}, false},
		{"a VM twice in a row", []zonegen.Contribution{c("a", 1, false), c("a", 2, false), c("b", 3, false)},
			[]zonegen.Contribution{c("a", 2, false), c("b", 3, false)}, false},
		{"a VM twice apart", []zonegen.Contribution{c("b", 1, false), c("a", 2, false), c("b", 3, false)},
			[]zonegen.Contribution{c("b", 3, false), c("a", 2, false)}, false},
		{"unsorted", []zonegen.Contribution{c("c", 1, false), c("a", 2, false)},
			[]zonegen.Contribution{c("c", 1, false), c("a", 2, false)}, false},
		{"a later unresolved one is skipped", []zonegen.Contribution{c("a", 1, false), c("a", 2, true)},
			[]zonegen.Contribution{c("a", 1, false)}, false},
	} {
		orig := slices.Clone(tc.batch)
		got := latest(tc.batch)
		same := func(x, y zonegen.Contribution) bool {
			return x.VM == y.VM && x.Unresolved == y.Unresolved && len(x.Zones) == len(y.Zones)
		}
		if !slices.EqualFunc(got, tc.want, same) {
			t.Errorf("%s: latest gives %v, want %v", tc.name, got, tc.want)
		}
		if !slices.EqualFunc(tc.batch, orig, same) {
			t.Errorf("%s: latest changed its batch to %v", tc.name, tc.batch)
		}
		if tc.unchanged && len(got) > 0 && &got[0] != &tc.batch[0] {
			t.Errorf("%s: a sorted batch of distinct VMs was copied", tc.name)
		}
	}
}

// TestBulkIndexFromForms: the indexes of a tree built in bulk, made from
// the canonical forms the sort made (buildIndexOf), are those the names
// themselves give (buildIndex), for cnsd's names and random plain ones,
// leaves of shared words included; names that are not all plain give no
// forms, and their tree's indexes are still the names'.
func TestBulkIndexFromForms(t *testing.T) {
	check := func(what string, vms map[string][]Record, wantForms bool) {
		t.Helper()
		b := buildBulk(0, vms)
		if (b.forms != nil) != wantForms {
			t.Fatalf("%s: forms %v, want them %v", what, b.forms != nil, wantForms)
		}
		for i, f := range b.forms {
			if want, _ := canonical(nil, b.names[i]); f != string(want) {
				t.Fatalf("%s: form of %q is %q, want %q", what, b.names[i], f, want)
			}
		}
		snap := emptySnapshot("z.", 0)
		snap.fill(b)
		leaves := 0
		for _, leaf := range leafTNodes(snap.names.root, nil) {
			leaves++
			if got, want := leaf.idx.Load(), buildIndex(leaf.keys); !reflect.DeepEqual(got, want) {
				t.Fatalf("%s: leaf %d (%q…): index from the forms %+v, from the names %+v", what, leaves, leaf.keys[0], got, want)
			}
		}
		if leaves < 2 {
			t.Fatalf("%s: %d leaves", what, leaves)
		}
	}
	cns := map[string][]Record{}
	for i := range 3000 {
		c := cnsVM(i)
		if recs := byZone(c)["dc1.cns.example.com."]; len(recs) > 0 {
			cns[c.VM] = recs
		}
	}
	check("cnsd's names", cns, true)
	rng := rand.New(rand.NewPCG(1, 2))
	random := map[string][]Record{}
	for i := range 2000 {
		vm := fmt.Sprintf("vm%d", i)
		name := "z."
		for range rng.IntN(4) {
			name = []string{"a", "b", "ab", "\xff", "a\\.b", "0"}[rng.IntN(6)] + "." + name
		}
		random[vm] = []Record{a(name, "10.0.0.1", vm)}
	}
	check("random plain names", random, true)
	random["vm-relative"] = []Record{a("relative.z", "10.0.0.1", "vm-relative")}
	check("a relative name among them", random, false)
}

// leafTNodes appends the leaves under n, in order, to out.
func leafTNodes(n *tnode, out []*tnode) []*tnode {
	if n.kids == nil {
		return append(out, n)
	}
	for _, kid := range n.kids {
		out = leafTNodes(kid, out)
	}
	return out
}

// unreplicated wraps a Backend: while hold is set, Apply says no replica
// acknowledged the write, which a failover then lost: the next Apply of
// the same changes writes them anew.
type unreplicated struct {
	Backend
	hold bool
}

func (u *unreplicated) Apply(ctx context.Context, epoch uint64, changes []ZoneChange) error {
	if u.hold {
		return fmt.Errorf("injected: %w", ErrNotReplicated)
	}
	return u.Backend.Apply(ctx, epoch, changes)
}

// TestLargeCommitFillsZonesAlongsideTheWrite: in a large commit, a zone
// it fills (at least smallOld times the records it held) keeps no diff,
// in the Store and in the backend, even for a secondary that wants one
// (Retain) and a journal with room; its names are built while the
// backend writes, yet the zone served and the diff Commit returns are
// those of a small commit, also when the commit is first held (no
// replica) and confirmed by the next; over the memory backend, bbolt
// and Redis, whose zones, loaded again, are those served. A zone the
// commit does not fill keeps its diff.
func TestLargeCommitFillsZonesAlongsideTheWrite(t *testing.T) {
	defer func(n int) { parallelBuild = n }(parallelBuild)
	const filled, edited = "dc1.cns.example.com.", "edited.example.com."
	var first, batch []zonegen.Contribution
	for i := range 400 {
		c := cnsVM(i)
		if i < 8 {
			// Eight VMs also hold many records in edited: 400 VMs'
			// one each later are fewer than eight times as many.
			recs := []Record{}
			for k := range 60 {
				recs = append(recs, a(fmt.Sprintf("n%d.%s.%s", k, c.VM, edited), "10.1.1.1", c.VM))
			}
			c = contrib(c.VM, map[string][]Record{filled: byZone(c)[filled], edited: recs})
			first = append(first, c)
			continue
		}
		c.Zones = append(c.Zones, zonegen.ZoneRecords{Zone: edited, Records: []Record{a("v"+c.VM+"."+edited, "10.2.2.2", c.VM)}})
		batch = append(batch, c)
	}
	retain := func(string) (uint32, bool) { return 1, true }

	small, _ := open(t, NewMemory(), Options{Retain: retain})
	commit(t, small, first...)
	want := map[string]Diff{}
	for _, d := range commit(t, small, batch...) {
		want[d.Zone] = d
	}

	for _, tc := range []struct {
		backend string
		held    bool
	}{{"memory", false}, {"memory", true}, {"bbolt", false}, {"bbolt", true}, {"redis", false}, {"redis", true}} {
		held := tc.held
		parallelBuild = 1 << 30
		var mem Backend = NewMemory()
		var reopen func() Backend // the backend again, as after a restart
		switch tc.backend {
		case "bbolt":
			path := filepath.Join(t.TempDir(), "zones.db")
			mem = OpenBoltForTest(t, path, true)
			reopen = func() Backend {
				mem.Close()
				return OpenBoltForTest(t, path, true)
			}
		case "redis":
			r, srv := openTestRedis(t)
			mem, reopen = r, func() Backend { return openRedisAt(t, srv.URL()) }
		}
		b := &unreplicated{Backend: mem}
		s, _ := open(t, b, Options{Retain: retain})
		commit(t, s, first...)
		parallelBuild = 1
		b.hold = held
		diffs, err := s.Commit(t.Context(), batch)
		if held {
			if !errors.Is(err, ErrNotReplicated) {
				t.Fatalf("held: Commit returned %v", err)
			}
			b.hold = false
			if diffs, err = s.Commit(t.Context(), nil); err != nil {
				t.Fatalf("confirming the held commit: %v", err)
			}
		} else if err != nil {
			t.Fatal(err)
		}
		if len(diffs) != len(want) {
			t.Fatalf("held %v: %d diffs, want %d", held, len(diffs), len(want))
		}
		for _, d := range diffs {
			w := want[d.Zone]
			if !slices.Equal(d.Added, w.Added) || !slices.Equal(d.Removed, w.Removed) {
				t.Fatalf("held %v: %s: diff +%d -%d, want +%d -%d", held, d.Zone, len(d.Added), len(d.Removed), len(w.Added), len(w.Removed))
			}
			if !slices.Equal(all(s, d.Zone), all(small, d.Zone)) {
				t.Fatalf("held %v: %s serves other records than after a small commit", held, d.Zone)
			}
		}
		data, err := mem.Load(t.Context(), nil)
		if err != nil {
			t.Fatal(err)
		}
		if n, m := len(s.Snapshot(filled).journal), len(data[filled].Journal); n != 0 || m != 0 {
			t.Errorf("held %v: %s, filled, keeps %d diffs, the backend %d; want none", held, filled, n, m)
		}
		if n, m := len(s.Snapshot(edited).journal), len(data[edited].Journal); n != 2 || m != 2 {
			t.Errorf("held %v: %s, not filled, keeps %d diffs, the backend %d; want 2", held, edited, n, m)
		}
		if reopen == nil {
			continue
		}
		// What the write beside the build left in the backend is the
		// zones served: a restart loads them again.
		again, _ := open(t, reopen(), Options{})
		for _, d := range diffs {
			if !slices.Equal(all(again, d.Zone), all(s, d.Zone)) {
				t.Errorf("%s, held %v: %s loaded again differs from what was served", tc.backend, held, d.Zone)
			}
		}
	}
}

// TestLargeCommitFillsZoneOnOneCore: a large commit fills its zones the
// same way (no diff kept) when it changes one zone only, and on one core:
// both used to leave it to the small commits' path, which keeps the whole
// fill as a diff in the journal, in memory and in the backend.
func TestLargeCommitFillsZoneOnOneCore(t *testing.T) {
	defer func(n int) { parallelBuild = n }(parallelBuild)
	const filled = "dc1.cns.example.com."
	var batch []zonegen.Contribution
	for i := range 400 {
		c := cnsVM(i)
		batch = append(batch, contrib(c.VM, map[string][]Record{filled: byZone(c)[filled]}))
	}
	retain := func(string) (uint32, bool) { return 1, true }
	for _, procs := range []int{runtime.GOMAXPROCS(0), 1} {
		t.Run(fmt.Sprintf("GOMAXPROCS=%d", procs), func(t *testing.T) {
			defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(procs))
			mem := NewMemory()
			s, _ := open(t, mem, Options{Retain: retain})
			parallelBuild = 1
			commit(t, s, batch...)
			data, err := mem.Load(t.Context(), nil)
			if err != nil {
				t.Fatal(err)
			}
			if n, m := len(s.Snapshot(filled).journal), len(data[filled].Journal); n != 0 || m != 0 {
				t.Errorf("%s, filled by one large commit, keeps %d diffs, the backend %d; want none", filled, n, m)
			}
			if got := s.Snapshot(filled).Len(); got == 0 {
				t.Errorf("%s serves no record after the commit", filled)
			}
		})
	}
}
