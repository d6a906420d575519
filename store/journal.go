package store

import (
	"fmt"
	"slices"
	"unsafe"

	"github.com/cnsd/cnsd/zonegen"
)

// jentry is one journal diff, kept encoded (EncodeDiff) in a buffer of
// its own. The Diff a commit builds shares its strings with the
// contributions it came from — zonegen's arena chunks, a backend's read
// buffers — so holding it would keep all of those alive for as long as
// the entry lives: several kilobytes per entry where the encoding takes a
// few hundred bytes, and the heap would follow the journals' turnover
// rather than their size (issue 15). DiffSince decodes the entries it
// needs; an IXFR is rare next to commits.
type jentry struct {
	from, to Serial
	enc      []byte
}

// jentrySlot is what one entry takes in the journal's backing array.
const jentrySlot = int(unsafe.Sizeof(jentry{}))

// newJEntry encodes d into an entry that refers to none of d's memory.
// The encoding is copied into a buffer sized by the allocator, so that
// cap(enc) is the heap it really takes and the journal's byte count
// (bound and metric) reflects the heap.
func newJEntry(d Diff) jentry {
	enc := EncodeDiff(d)
	return jentry{from: d.From, to: d.To, enc: append([]byte(nil), enc...)}
}

// size is the heap the entry holds: its encoding and its array slot.
func (e jentry) size() int { return cap(e.enc) + jentrySlot }

// decode returns the entry's diff; its strings are new allocations.
func (e jentry) decode(zone string) (Diff, error) { return DecodeDiff(zone, e.enc) }

// addJournal appends d to the snapshot's journal and trims the oldest
// entries until at most o.JournalEntries remain and their sizes total at
// most o.JournalBytes (a diff larger than that on its own is not kept at
// all: the zone is then transferred whole). The backing array is only
// ever written past the end of every published journal, so older
// snapshots sharing it are unaffected.
//
// When a secondary still serves serial need (o.Retain), the entries from
// the one starting at need are kept beyond those limits, up to
// retainFactor times them, so that a secondary a few commits behind gets
// an IXFR rather than the whole zone.
//
// It returns d's encoding, for the backend to write
// (ZoneChange.diffEnc), or nil when d is too large to be kept even on
// its own: its encoding is then given up past that size (a bootstrap's
// diff of a million records), the journal emptied, and a backend that
// still wants it encodes it itself.
func (s *Snapshot) addJournal(d Diff, o *Options) []byte {
	limit, need, hasNeed := o.journalRoom(s.zone)
	enc, ok := encodeDiffUpTo(d, limit)
	if !ok {
		s.dropJournal()
		return nil
	}
	e := jentry{from: d.From, to: d.To, enc: append([]byte(nil), enc...)}
	if len(s.journal) == cap(s.journal) {
		s.jdead = 0 // append moves the entries to a new array
	}
	j, jbytes := append(s.journal, e), s.jbytes+e.size()
	keep := -1 // index of the oldest entry a secondary needs
	if hasNeed {
		keep = slices.IndexFunc(j, func(e jentry) bool { return e.from == need })
	}
	maxEntries, maxBytes := o.JournalEntries, o.JournalBytes
	for len(j) > 0 && (len(j) > maxEntries || jbytes > maxBytes) {
		if keep == 0 && len(j) <= retainFactor*maxEntries && jbytes <= retainFactor*maxBytes {
			break
		}
		jbytes -= j[0].size()
		s.jdead += j[0].size()
		j = j[1:]
		keep--
	}
	switch {
	case len(j) == 0:
		s.dropJournal() // let the trimmed backing array go
		return e.enc
	case s.jdead > jbytes/4:
		// The trimmed entries' slots keep their encodings reachable
		// for as long as the array lives. Past a quarter of the live
		// entries' size, these are copied to an array of their own:
		// the heap held by trimmed entries stays under a quarter of
		// the journal's, for one copy of the journal per quarter of it
		// trimmed.
		j, s.jdead = append(make([]jentry, 0, len(j)+len(j)/4+1), j...), 0
	}
	s.journal, s.jbytes = j, jbytes
	return e.enc
}

// journalRoom returns the longest encoding of a new diff that the
// journal of zone keeps, and the serial a secondary still serves, if one
// is known (Options.Retain). Past that size the new entry is trimmed
// whatever else the journal holds (see addJournal's loop); with a Retain
// the bound is the retained one, looser than needed and so still safe.
func (o *Options) journalRoom(zone string) (limit int, need Serial, hasNeed bool) {
	need, hasNeed = o.needed(zone)
	limit = o.JournalBytes - jentrySlot
	if hasNeed {
		limit = retainFactor*o.JournalBytes - jentrySlot
	}
	return max(limit, 0), need, hasNeed
}

// dropJournal empties the journal, as for a diff too large to keep: a
// secondary behind the new serial then transfers the zone whole.
func (s *Snapshot) dropJournal() {
	s.journal, s.jbytes, s.jdead = nil, 0, 0
}

// retainFactor bounds how far past its limits a journal grows for a
// secondary that is behind.
const retainFactor = 4

// needed asks the Options' Retain for the oldest serial of zone a
// secondary still serves.
func (o *Options) needed(zone string) (Serial, bool) {
	if o.Retain == nil {
		return 0, false
	}
	s, ok := o.Retain(zone)
	return Serial(s), ok
}

// DiffSince returns the condensed change from serial from to the
// snapshot's serial: every record that was removed or added across the
// span, where adding then removing a record (or removing then adding it)
// cancels out. from equal to the snapshot's serial gives an empty Diff;
// a serial the journal does not reach back to gives ErrNotCovered.
func (s *Snapshot) DiffSince(from Serial) (Diff, error) {
	out := Diff{Zone: s.zone, From: from, To: s.serial}
	if from == s.serial {
		return out, nil
	}
	i := slices.IndexFunc(s.journal, func(e jentry) bool { return e.from == from })
	if i < 0 {
		return Diff{}, fmt.Errorf("diff of %s since %d (now %d): %w", s.zone, from, s.serial, ErrNotCovered)
	}
	diffs := make([]Diff, 0, len(s.journal)-i)
	for _, e := range s.journal[i:] {
		d, err := e.decode(s.zone)
		if err != nil {
			return Diff{}, fmt.Errorf("diff of %s since %d: journal entry %d→%d: %w", s.zone, from, e.from, e.to, err)
		}
		diffs = append(diffs, d)
	}
	out.Removed, out.Added = condense(diffs)
	return out, nil
}

// condense folds consecutive diffs into one removed and one added list,
// each sorted by Record.Compare.
func condense(diffs []Diff) (removed, added []Record) {
	type key struct {
		name string
		typ  zonegen.Type
		data string
	}
	net := map[key]Record{}
	sign := map[key]int{} // -1 removed, +1 added over the span so far
	for _, d := range diffs {
		for _, r := range d.Removed {
			k := key{r.Name, r.Type, r.Data}
			if sign[k] == 1 {
				delete(sign, k)
				delete(net, k)
				continue
			}
			sign[k], net[k] = -1, r
		}
		for _, r := range d.Added {
			k := key{r.Name, r.Type, r.Data}
			if sign[k] == -1 {
				delete(sign, k)
				delete(net, k)
				continue
			}
			sign[k], net[k] = 1, r
		}
	}
	for k, r := range net {
		if sign[k] < 0 {
			removed = append(removed, r)
		} else {
			added = append(added, r)
		}
	}
	slices.SortFunc(removed, Record.Compare)
	slices.SortFunc(added, Record.Compare)
	return removed, added
}

// Journal returns how many diffs the snapshot's journal holds and the
// heap they take in bytes, for metrics: the encoded diffs and the slots
// of the array holding them, with the spare slots and the trimmed entries
// the array still holds (see addJournal).
func (s *Snapshot) Journal() (entries, bytes int) {
	return len(s.journal), s.jbytes + s.jdead + (cap(s.journal)-len(s.journal))*jentrySlot
}
