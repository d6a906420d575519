package bolt

import (
	"bytes"
	"encoding/binary"
	"fmt"

	"github.com/cnsd/cnsd/store"
	bbolt "go.etcd.io/bbolt"
)

// A journal entry is stored in chunks under the keys seq (uint64 BE) +
// chunk index (uint32 BE). bbolt rewrites a whole leaf, values included,
// when any key in it changes; a bootstrap diff of a million records in one
// value would be copied again by the next few commits that append next to
// it. Chunks keep every leaf small.
const boltChunkSize = 16 << 10

func boltChunkKey(seq uint64, chunk uint32) []byte {
	return binary.BigEndian.AppendUint32(binary.BigEndian.AppendUint64(make([]byte, 0, 12), seq), chunk)
}

// boltAppendJournal appends c's diff and trims the journal to the newest
// c.KeepJournal entries.
// A diff the journal is not to keep (KeepJournal 0: a bootstrap larger
// than the journal's bound) is not written only to be deleted.
func boltAppendJournal(journal *bbolt.Bucket, c *store.ZoneChange) error {
	if c.KeepJournal <= 0 {
		return boltTrimJournal(journal, 0)
	}
	journal.FillPercent = 1 // append-only: full pages, nothing is inserted before them
	seq, err := journal.NextSequence()
	if err != nil {
		return fmt.Errorf("journal: %w", err)
	}
	enc := c.EncodedDiff()
	for i := 0; i == 0 || i*boltChunkSize < len(enc); i++ {
		chunk := enc[i*boltChunkSize : min((i+1)*boltChunkSize, len(enc))]
		if err := journal.Put(boltChunkKey(seq, uint32(i)), chunk); err != nil {
			return fmt.Errorf("journal/%d: %w", seq, err)
		}
	}
	return boltTrimJournal(journal, max(c.KeepJournal, 0))
}

// boltTrimJournal deletes all but the newest keep entries. Keys are
// collected first: deleting under a cursor skips entries.
func boltTrimJournal(journal *bbolt.Bucket, keep int) error {
	var entries [][]byte // each entry's first key
	c := journal.Cursor()
	for k, _ := c.First(); k != nil; k, _ = c.Seek(boltNextEntry(k)) {
		entries = append(entries, bytes.Clone(k))
	}
	var doomed [][]byte
	for _, first := range entries[:max(len(entries)-keep, 0)] {
		prefix := first[:min(len(first), 8)]
		for k, _ := c.Seek(first); k != nil && bytes.HasPrefix(k, prefix); k, _ = c.Next() {
			doomed = append(doomed, bytes.Clone(k))
		}
	}
	for _, k := range doomed {
		if err := journal.Delete(k); err != nil {
			return fmt.Errorf("journal/%s: %w", boltEntryName(k), err)
		}
	}
	return nil
}

// boltNextEntry is the smallest key after every chunk of k's entry.
func boltNextEntry(k []byte) []byte {
	if len(k) < 8 {
		return append(bytes.Clone(k), 0) // a stray short key: step past it
	}
	seq := binary.BigEndian.Uint64(k)
	if seq == ^uint64(0) {
		return append(bytes.Clone(k), 0xff)
	}
	return boltChunkKey(seq+1, 0)
}

// boltEntryName names a journal entry in reports: its sequence number.
func boltEntryName(k []byte) string {
	if len(k) != 12 {
		return fmt.Sprintf("%x", k)
	}
	return fmt.Sprint(binary.BigEndian.Uint64(k))
}

// boltReadJournal decodes the journal from the entry whose first key is
// start, or from the oldest entry when start is nil. An undecodable entry
// is reported and drops it and every older entry, so that what is
// returned stays a chain of diffs ending at the zone's serial.
func boltReadJournal(zone string, jb *bbolt.Bucket, start []byte, report func(string, error)) []store.Diff {
	if jb == nil {
		return nil
	}
	var out []store.Diff
	c := jb.Cursor()
	k, v := c.First()
	if start != nil {
		k, v = c.Seek(start)
	}
	for k != nil {
		name := boltEntryName(k)
		var val []byte
		var err error
		val, k, v, err = boltEntryValue(c, k, v)
		var d store.Diff
		if err == nil {
			d, err = store.DecodeDiff(zone, val)
		}
		if err != nil {
			report(fmt.Sprintf("%s%s/journal/%s", boltZonePrefix, zone, name), err)
			out = out[:0]
			continue
		}
		out = append(out, d)
	}
	return out
}

// boltEntryValue joins the chunks of the entry at k, v and returns the
// cursor's position after it. A malformed key or a missing chunk is an
// error naming it.
func boltEntryValue(c *bbolt.Cursor, k, v []byte) (val, nk, nv []byte, err error) {
	if len(k) != 12 {
		nk, nv = c.Next()
		return nil, nk, nv, fmt.Errorf("key of %d bytes, want 12", len(k))
	}
	seq := binary.BigEndian.Uint64(k)
	if n := binary.BigEndian.Uint32(k[8:]); n != 0 {
		err = fmt.Errorf("chunk %d without chunk 0", n)
	}
	val = v // one chunk: decoded in place, without a copy
	for n := uint32(1); ; n++ {
		nk, nv = c.Next()
		if len(nk) != 12 || binary.BigEndian.Uint64(nk) != seq {
			return val, nk, nv, err
		}
		if got := binary.BigEndian.Uint32(nk[8:]); got != n && err == nil {
			err = fmt.Errorf("chunk %d where chunk %d belongs", got, n)
		}
		if n == 1 {
			val = append(make([]byte, 0, 2*len(v)+len(nv)), v...) // never append into the mmap
		}
		val = append(val, nv...)
	}
}

// boltSeekJournal returns the first key of the entry whose diff starts at
// serial from, reading only each entry's first chunk; nil when none does.
func boltSeekJournal(jb *bbolt.Bucket, from store.Serial) []byte {
	if jb == nil {
		return nil
	}
	c := jb.Cursor()
	for k, v := c.First(); k != nil; k, v = c.Seek(boltNextEntry(k)) {
		if f, _, err := store.DiffSerials(v); err == nil && f == from {
			return bytes.Clone(k)
		}
	}
	return nil
}
