package store

import (
	"fmt"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"
	"unsafe"
	"weak"

	"github.com/cnsd/cnsd/zonegen"
)

// chunk imitates one of zonegen's arena chunks: record strings carved out
// of a single buffer, so that any one of them keeps all of it alive.
type chunk struct{ buf []byte }

func newChunk() *chunk { return &chunk{buf: make([]byte, 0, 64<<10)} }

func (c *chunk) str(s string) string {
	start := len(c.buf)
	c.buf = append(c.buf, s...) // within capacity: never moves
	return unsafe.String(&c.buf[start], len(s))
}

// chunkVM returns vm's contribution of n TXT records of generation gen in
// zone, every string carved out of a new chunk, and a weak pointer to
// that chunk.
func chunkVM(vm string, gen, n int) (zonegen.Contribution, weak.Pointer[byte]) {
	c := newChunk()
	recs := make([]Record, n)
	for i := range recs {
		recs[i] = Record{Name: c.str(fmt.Sprintf("r%d.%s", i, zone)), Type: zonegen.TypeTXT,
			Data: c.str(fmt.Sprintf("%q", fmt.Sprint("gen", gen))), Source: c.str(vm)}
	}
	return contrib(vm, map[string][]Record{zone: recs}), weak.Make(&c.buf[:1][0])
}

// commitChunkVM commits chunkVM's contribution and returns the weak
// pointer; nothing else of the chunk outlives the call.
func commitChunkVM(t *testing.T, s *Store, gen int) weak.Pointer[byte] {
	c, w := chunkVM("vm", gen, 20)
	commit(t, s, c)
	return w
}

// TestJournalDropsArena: once a VM's records are replaced, the chunk its
// old records were carved from is garbage, although the journal still
// holds the diff that removed them — it keeps a copy, not the strings.
func TestJournalDropsArena(t *testing.T) {
	b := OpenBoltForTest(t, filepath.Join(t.TempDir(), "cnsd.db"), true)
	s, _ := open(t, b, Options{})
	old := commitChunkVM(t, s, 0)
	from := s.Snapshot(zone).Serial()
	commitChunkVM(t, s, 1)
	runtime.GC()
	runtime.GC() // weak pointers clear in the cycle after the object is found dead
	if old.Value() != nil {
		t.Errorf("the replaced records' chunk is still reachable: the journal refers into it")
	}
	want, _ := chunkVM("vm", 0, 20)
	d, err := s.DiffSince(zone, from)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(d.Removed, want.Zones[0].Records) {
		t.Errorf("the journal lost the removed records: got %v, want %v", d.Removed, want.Zones[0].Records)
	}
}

// txt is the record of commit i in TestJournalByteBound: each one a
// little larger than the one before.
func txt(i int) Record {
	data := fmt.Sprintf("%q", fmt.Sprint(i, strings.Repeat("x", 300+i*10)))
	return Record{Name: "t." + zone, Type: zonegen.TypeTXT, Data: data, Source: "vm"}
}

// TestJournalByteBound: with a byte bound and no count bound, the journal
// keeps the newest diffs whose sizes fit in it, evicting the oldest, and
// its size is what the encodings really take.
func TestJournalByteBound(t *testing.T) {
	const bound, commits = 16 << 10, 40
	s, _ := open(t, NewMemory(), Options{JournalEntries: 1 << 20, JournalBytes: bound})
	var serials []Serial
	for i := range commits {
		commit(t, s, contrib("vm", map[string][]Record{zone: {txt(i)}}))
		serials = append(serials, s.Snapshot(zone).Serial())
	}
	snap := s.Snapshot(zone)
	j, sum := snap.journal, 0
	for _, e := range j {
		sum += cap(e.enc) + jentrySlot
	}
	if sum != snap.jbytes || sum > bound {
		t.Fatalf("journal of %d entries counts %d bytes, holds %d; bound %d", len(j), snap.jbytes, sum, bound)
	}
	if len(j) < 2 || len(j) >= commits-1 {
		t.Fatalf("journal holds %d of %d diffs; the bound should keep some and evict some", len(j), commits)
	}
	newest := serials[commits-len(j)-1:]
	for i, e := range j {
		if e.from != newest[i] || e.to != newest[i+1] {
			t.Fatalf("entry %d spans %d→%d, want %d→%d: not the newest diffs in order", i, e.from, e.to, newest[i], newest[i+1])
		}
	}
	// The newest evicted diff, of commit k, did not fit beside them.
	k := commits - len(j) - 1
	evicted := newJEntry(Diff{Zone: zone, Removed: []Record{txt(k - 1)}, Added: []Record{txt(k)}})
	if sum+evicted.size() <= bound {
		t.Errorf("a diff of %d bytes was evicted although the journal (%d bytes) had room for it under %d", evicted.size(), sum, bound)
	}
}

// TestJournalArrayDropsTrimmed: entries trimmed from the journal's front
// stay in its backing array until the entries move to a new one; the
// journal moves them before the trimmed ones hold more than a quarter of
// what the live ones do, so trimmed encodings do not stay reachable for
// long.
func TestJournalArrayDropsTrimmed(t *testing.T) {
	s, _ := open(t, NewMemory(), Options{JournalEntries: 16})
	type added struct {
		enc  weak.Pointer[byte]
		size int
	}
	var entries []added
	for i := range 200 {
		commit(t, s, contrib("vm", map[string][]Record{zone: {txt(i)}}))
		j := s.Snapshot(zone).journal
		e := j[len(j)-1]
		entries = append(entries, added{weak.Make(&e.enc[0]), e.size()})
	}
	runtime.GC()
	runtime.GC()
	snap := s.Snapshot(zone)
	alive, held := 0, 0
	for _, e := range entries[:len(entries)-len(snap.journal)] {
		if e.enc.Value() != nil {
			alive, held = alive+1, held+e.size
		}
	}
	if held > snap.jbytes/4 {
		t.Errorf("%d trimmed entries of %d bytes are still reachable, want at most a quarter of the journal's %d", alive, held, snap.jbytes)
	}
	if _, bytes := snap.Journal(); bytes < snap.jbytes+held {
		t.Errorf("Journal reports %d bytes, less than the live entries' %d and the trimmed ones' %d it holds", bytes, snap.jbytes, held)
	}
}
