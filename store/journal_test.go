package store

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
)

func TestJournalTrim(t *testing.T) {
	big := strings.Repeat("x", 1000)
	tests := []struct {
		name    string
		opts    Options
		data    string
		commits int
		want    int
	}{
		{"by count", Options{JournalEntries: 3}, "small", 10, 3},
		{"by bytes", Options{JournalBytes: 5000}, big, 10, 2}, // each diff ≈ 2 records of ~1050 bytes
		{"a diff over the byte bound is not kept", Options{JournalBytes: 500}, big, 3, 0},
		{"defaults keep everything here", Options{}, "small", 10, 10},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			mem := NewMemory()
			s, _ := open(t, mem, tt.opts)
			for i := range tt.commits {
				commit(t, s, contrib("vm", map[string][]Record{zone: {{Name: "t.example.com.", Type: 16, Data: fmt.Sprint(i, tt.data), Source: "vm"}}}))
			}
			snap := s.Snapshot(zone)
			if len(snap.journal) != tt.want {
				t.Fatalf("journal has %d entries, want %d", len(snap.journal), tt.want)
			}
			if len(snap.journal) > 0 && snap.journal[len(snap.journal)-1].to != snap.Serial() {
				t.Errorf("journal does not end at the serial")
			}
			zd, _ := mem.Load(t.Context(), nil)
			if got := len(zd[zone].Journal); got != tt.want {
				t.Errorf("backend journal has %d entries, want %d", got, tt.want)
			}
			first, past := snap.Serial(), snap.Serial()-1
			if tt.want > 0 {
				first, past = snap.journal[0].from, snap.journal[0].from-1
			}
			if first == 0 {
				past = snap.journal[0].to - 1 // before the zone existed
			}
			if _, err := s.DiffSince(zone, first); err != nil {
				t.Errorf("DiffSince(oldest covered %d): %v", first, err)
			}
			if _, err := s.DiffSince(zone, past); !errors.Is(err, ErrNotCovered) {
				t.Errorf("DiffSince(%d) past the journal: err = %v, want ErrNotCovered", past, err)
			}
		})
	}
}

func TestDiffSinceCondenses(t *testing.T) {
	x, y := a("x.example.com.", "10.0.0.1", "vm"), a("y.example.com.", "10.0.0.2", "vm")
	keep := a("keep.example.com.", "10.0.0.9", "keeper")
	put := func(recs ...Record) map[string][]Record { return map[string][]Record{zone: recs} }
	tests := []struct {
		name         string
		steps        []map[string][]Record // vm's records after each commit
		removed, add []Record
	}{
		{"add then delete cancels", []map[string][]Record{put(x), put()}, nil, nil},
		{"delete then add cancels", []map[string][]Record{put(), put(x)}, nil, nil},
		{"add one, swap for another", []map[string][]Record{put(x), put(y)}, nil, []Record{y}},
		{"delete, add, delete", []map[string][]Record{put(), put(x), put()}, []Record{x}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, _ := open(t, NewMemory(), Options{})
			// keeper holds the zone open; vm starts with x unless the
			// first step adds it.
			start := put(x)
			if tt.name == "add then delete cancels" || tt.name == "add one, swap for another" {
				start = put()
			}
			commit(t, s, contrib("keeper", put(keep)), contrib("vm", start))
			from := s.Snapshot(zone).Serial()
			for _, st := range tt.steps {
				commit(t, s, contrib("vm", st))
			}
			d, err := s.DiffSince(zone, from)
			if err != nil {
				t.Fatalf("DiffSince: %v", err)
			}
			if !slices.Equal(d.Removed, tt.removed) || !slices.Equal(d.Added, tt.add) {
				t.Errorf("condensed = -%v +%v, want -%v +%v", d.Removed, d.Added, tt.removed, tt.add)
			}
			if d.From != from || d.To != s.Snapshot(zone).Serial() {
				t.Errorf("condensed spans %d→%d, want %d→%d", d.From, d.To, from, s.Snapshot(zone).Serial())
			}
		})
	}
	t.Run("current serial gives an empty diff", func(t *testing.T) {
		s, _ := open(t, NewMemory(), Options{})
		commit(t, s, contrib("vm", put(x)))
		d, err := s.DiffSince(zone, s.Snapshot(zone).Serial())
		if err != nil || len(d.Removed)+len(d.Added) != 0 {
			t.Errorf("DiffSince(current) = %+v, %v", d, err)
		}
		if _, err := s.DiffSince("nowhere.", 1); !errors.Is(err, ErrNotCovered) {
			t.Errorf("DiffSince(unknown zone) err = %v, want ErrNotCovered", err)
		}
	})
}

// TestJournalRetainsForSecondary: with a secondary still at an old serial,
// the journal keeps the diffs from that serial on, past its count limit
// but not past four times it; once they would pass that, the secondary
// needs the whole zone anyway and the journal is back to its limit.
func TestJournalRetainsForSecondary(t *testing.T) {
	for _, tt := range []struct {
		commits, want int
		covered       bool
	}{
		{commits: 10, want: 8, covered: true}, // the diffs from the 3rd commit on
		{commits: 20, want: 3, covered: false},
	} {
		t.Run(fmt.Sprint(tt.commits, " commits"), func(t *testing.T) {
			var need uint32
			s, _ := open(t, NewMemory(), Options{JournalEntries: 3, Retain: func(z string) (uint32, bool) {
				return need, need != 0 && z == zone
			}})
			for i := range tt.commits {
				commit(t, s, contrib("vm", map[string][]Record{zone: {{Name: "t.example.com.", Type: 16, Data: fmt.Sprint(i), Source: "vm"}}}))
				if i == 1 {
					need = uint32(s.Snapshot(zone).Serial())
				}
			}
			snap := s.Snapshot(zone)
			if len(snap.journal) != tt.want {
				t.Errorf("journal has %d entries, want %d", len(snap.journal), tt.want)
			}
			if _, err := snap.DiffSince(Serial(need)); (err == nil) != tt.covered {
				t.Errorf("DiffSince(the secondary's serial): %v, want covered %v", err, tt.covered)
			}
		})
	}
}

// TestJournalBoundSkipsEncoding checks that a diff given up before its
// encoding is complete (too large for the journal) is kept or not exactly
// as the whole entry's size says, around the byte bound and, with a
// secondary to retain for, around the retained bound.
func TestJournalBoundSkipsEncoding(t *testing.T) {
	var recs []Record
	for i := range 200 {
		recs = append(recs, Record{Name: fmt.Sprintf("vm-%d.example.com.", i), Type: 16, Data: "some text", Source: "vm"})
	}
	d := Diff{Zone: zone, From: 0, To: 7, Added: recs}
	size := newJEntry(d).size()
	for _, retain := range []bool{false, true} {
		bound := func(b int) int { return b }
		var o Options
		if retain {
			o.Retain = func(string) (uint32, bool) { return 0, true }
			bound = func(b int) int { return retainFactor * b }
		}
		for b := size/retainFactor - 80; b <= size+80; b++ {
			o.JournalEntries, o.JournalBytes = 100, b
			snap := emptySnapshot(zone, 0)
			enc := snap.addJournal(d, &o)
			kept := size <= bound(b)
			if got := len(snap.journal) == 1; got != kept {
				t.Fatalf("retain %v, bound %d, entry of %d bytes: kept %v, want %v", retain, b, size, got, kept)
			}
			if kept && !slices.Equal(enc, EncodeDiff(d)) {
				t.Fatalf("retain %v, bound %d: the encoding returned is not the diff's", retain, b)
			}
		}
	}
}
