package redis

import (
	"bytes"
	"compress/flate"
	"errors"
	"fmt"
	"io"

	"github.com/cnsd/cnsd/store"
)

// Journal values of at least redisCompressMin bytes are stored
// deflate-compressed behind the format byte redisFormatFlate. A bootstrap
// diff holds every record of the zone with its VM UUID repeated, and would
// otherwise cost about as much memory as the zone itself; small diffs
// gain little and stay as store.EncodeDiff wrote them.
const (
	redisCompressMin      = 16 << 10
	redisFormatFlate byte = 0xF1 // apart from the codec's format bytes

	// redisInflateLimit caps an inflated value so a corrupt or hostile
	// value cannot exhaust memory: Redis values are at most 512 MiB.
	redisInflateLimit = 512 << 20
)

// packJournal returns the stored form of an encoded diff.
func packJournal(enc []byte) []byte {
	if len(enc) < redisCompressMin {
		return enc
	}
	var buf bytes.Buffer
	buf.Grow(len(enc) / 3)
	buf.WriteByte(redisFormatFlate)
	w, _ := flate.NewWriter(&buf, flate.BestSpeed) // the level is valid
	_, _ = w.Write(enc)                            // writes to a bytes.Buffer do not fail
	_ = w.Close()
	return buf.Bytes()
}

// unpackJournal undoes packJournal.
func unpackJournal(b []byte) ([]byte, error) {
	if len(b) == 0 || b[0] != redisFormatFlate {
		return b, nil
	}
	r := flate.NewReader(bytes.NewReader(b[1:]))
	defer r.Close()
	out, err := io.ReadAll(io.LimitReader(r, redisInflateLimit+1))
	if err != nil {
		return nil, fmt.Errorf("inflate journal entry: %w", err)
	}
	if len(out) > redisInflateLimit {
		return nil, errors.New("inflate journal entry: larger than 512 MiB")
	}
	return out, nil
}

// decodeJournalEntry decodes one stored journal value of zone.
func decodeJournalEntry(zone string, v []byte) (store.Diff, error) {
	enc, err := unpackJournal(v)
	if err != nil {
		return store.Diff{}, fmt.Errorf("zone %s: %w", zone, err)
	}
	return store.DecodeDiff(zone, enc)
}
