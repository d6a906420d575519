package store

import (
	"fmt"
	"slices"

	"github.com/cnsd/cnsd/zonegen"
)

// jentry is one journal diff with its approximate size.
type jentry struct {
	diff Diff
	size int
}

// diffSize approximates the bytes a Diff takes in memory and on the wire:
// the strings of each record plus a fixed overhead per record.
func diffSize(d Diff) int {
	n := 64
	for _, rs := range [2][]Record{d.Removed, d.Added} {
		for _, r := range rs {
			n += len(r.Name) + len(r.Data) + len(r.Source) + 32
		}
	}
	return n
}

// appendJournal returns j with d appended and the oldest entries trimmed
// until at most maxEntries remain and they total at most maxBytes (a diff
// larger than maxBytes on its own is not kept at all: the zone is then
// transferred whole). j's backing array is only ever written past the end
// of every published journal, so older snapshots sharing it are unaffected.
//
// When a secondary still serves serial need (hasNeed), the entries from
// the one starting at need are kept beyond those limits, up to
// retainFactor times them, so that a secondary a few commits behind gets
// an IXFR rather than the whole zone.
func appendJournal(j []jentry, jbytes int, d Diff, maxEntries, maxBytes int, need Serial, hasNeed bool) ([]jentry, int) {
	e := jentry{diff: d, size: diffSize(d)}
	j = append(j, e)
	jbytes += e.size
	keep := -1 // index of the oldest entry a secondary needs
	if hasNeed {
		keep = slices.IndexFunc(j, func(e jentry) bool { return e.diff.From == need })
	}
	for len(j) > 0 && (len(j) > maxEntries || jbytes > maxBytes) {
		if keep == 0 && len(j) <= retainFactor*maxEntries && jbytes <= retainFactor*maxBytes {
			break
		}
		jbytes -= j[0].size
		j = j[1:]
		keep--
	}
	if len(j) == 0 {
		j = nil // let the trimmed backing array go
	}
	return j, jbytes
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
	i := slices.IndexFunc(s.journal, func(e jentry) bool { return e.diff.From == from })
	if i < 0 {
		return Diff{}, fmt.Errorf("diff of %s since %d (now %d): %w", s.zone, from, s.serial, ErrNotCovered)
	}
	out.Removed, out.Added = condense(s.journal[i:])
	return out, nil
}

// condense folds consecutive diffs into one removed and one added list,
// each sorted by Record.Compare.
func condense(j []jentry) (removed, added []Record) {
	type key struct {
		name string
		typ  zonegen.Type
		data string
	}
	net := map[key]Record{}
	sign := map[key]int{} // -1 removed, +1 added over the span so far
	for _, e := range j {
		for _, r := range e.diff.Removed {
			k := key{r.Name, r.Type, r.Data}
			if sign[k] == 1 {
				delete(sign, k)
				delete(net, k)
				continue
			}
			sign[k], net[k] = -1, r
		}
		for _, r := range e.diff.Added {
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

// Journal returns how many diffs the snapshot's journal holds and their
// approximate size in bytes, for metrics.
func (s *Snapshot) Journal() (entries, bytes int) { return len(s.journal), s.jbytes }
