// Shared by both backends (Redis and bbolt): the binary encoding of stored values.

package store

import (
	"encoding/binary"
	"fmt"
	"strings"
)

// Format bytes open every encoded value so that a later layout can be told
// apart from this one, and so that a diff is never decoded as a VM's records.
const (
	formatVMRecords byte = 1
	formatDiff      byte = 2
)

// minRecordBytes is the smallest encoding of one record (name header,
// type, data header); it bounds how many records a buffer can claim.
const minRecordBytes = 4

// EncodeVMRecords encodes one VM's records in zone; every record's Source
// must be that VM. Names are stored relative to the zone, a name equal to
// the previous record's costs one byte, and the VM's UUID inside a name or
// data (instance names, TXT records) is cut out, so sorted records stay
// small; Source is not stored.
//
// Layout: formatVMRecords, then per record: name, type (uint16, big
// endian), data. A name is a uvarint header h: 0 = the previous record's
// name; otherwise v = h-1 says n = v>>2 bytes follow, relative to the zone
// (v&1 == 0; empty = the apex) or the whole name (v&1 == 1, for a name
// outside the zone), and when v&2 != 0 the bytes are preceded by a uvarint
// position p where the Source's UUID was cut out. Data is a uvarint header
// h: n = h>>1 bytes follow, preceded by a cut position when h&1 == 1.
func EncodeVMRecords(zone string, recs []Record) []byte {
	return appendVMRecords(make([]byte, 0, 1+len(recs)*24), zoneSuffix(zone), recs)
}

// VMRecordsEncoder appends EncodeVMRecords of many VMs' records in one
// zone to a caller's buffer, the zone's suffix made once: the bbolt
// backend writes a bootstrap's VMs into a few shared buffers, not one
// allocation a VM.
type VMRecordsEncoder struct{ suffix string }

// NewVMRecordsEncoder returns the encoder for records in zone.
func NewVMRecordsEncoder(zone string) VMRecordsEncoder {
	return VMRecordsEncoder{suffix: zoneSuffix(zone)}
}

// VMRecordsBound is the most bytes EncodeVMRecords can take for recs,
// in any zone: a name or data at most its own bytes after two uvarints
// (header and cut position), and the type's two bytes.
func VMRecordsBound(recs []Record) int {
	n := 1
	for _, r := range recs {
		n += len(r.Name) + len(r.Data) + 4*binary.MaxVarintLen64 + 2
	}
	return n
}

// Append appends EncodeVMRecords of recs to b and returns it.
func (e VMRecordsEncoder) Append(b []byte, recs []Record) []byte {
	return appendVMRecords(b, e.suffix, recs)
}

// appendVMRecords appends EncodeVMRecords of recs to b, for a zone whose
// zoneSuffix is suffix: a backend writing many VMs encodes them into
// one buffer, the suffix made once.
func appendVMRecords(b []byte, suffix string, recs []Record) []byte {
	e := recEncoder{zone: suffix, b: b}
	e.b = append(e.b, formatVMRecords)
	for _, r := range recs {
		e.record(r)
	}
	return e.b
}

// DecodeVMRecords decodes what EncodeVMRecords wrote for vm in zone; each
// record's Source is vm. Malformed input gives an error saying what is wrong.
func DecodeVMRecords(zone, vm string, b []byte) ([]Record, error) {
	recs, err := decodeVMRecords(zone, vm, b)
	if err != nil {
		return nil, fmt.Errorf("store: decode records of vm %s in zone %s: %w", vm, zone, err)
	}
	return recs, nil
}

func decodeVMRecords(zone, vm string, b []byte) ([]Record, error) {
	d := recDecoder{zone: zoneSuffix(zone), vm: vm, b: b}
	if err := d.format(formatVMRecords); err != nil {
		return nil, err
	}
	var recs []Record
	for i := 0; d.off < len(d.b); i++ {
		r, err := d.record()
		if err != nil {
			return nil, fmt.Errorf("record %d: %w", i, err)
		}
		recs = append(recs, r)
	}
	return recs, nil
}

// EncodeDiff encodes d without its zone (the key names it). Layout:
// formatDiff, From and To (uint32, big endian), then Removed and Added,
// each a uvarint count and that many records; a record is its Source
// (uvarint header: 0 = the previous record's source, else length+1 and the
// bytes) followed by the record as EncodeVMRecords writes it. The previous
// name and source carry over from Removed into Added.
func EncodeDiff(d Diff) []byte {
	b, _ := encodeDiffUpTo(d, -1)
	return b
}

// encodeDiffUpTo is EncodeDiff, given up (nil, false) as soon as the
// encoding is longer than limit bytes; a negative limit is none. A
// bootstrap's diff, too large for any journal, then costs a fraction of
// its encoding and none of its buffer (48 bytes a record reserved).
func encodeDiffUpTo(d Diff, limit int) ([]byte, bool) {
	size := 9 + (len(d.Removed)+len(d.Added))*48
	if limit >= 0 {
		size = min(size, limit+1)
	}
	e := recEncoder{zone: zoneSuffix(d.Zone), withSource: true}
	e.b = make([]byte, 0, size)
	e.b = append(e.b, formatDiff)
	e.b = binary.BigEndian.AppendUint32(e.b, uint32(d.From))
	e.b = binary.BigEndian.AppendUint32(e.b, uint32(d.To))
	for _, list := range [][]Record{d.Removed, d.Added} {
		e.b = binary.AppendUvarint(e.b, uint64(len(list)))
		for _, r := range list {
			e.record(r)
			if limit >= 0 && len(e.b) > limit {
				return nil, false
			}
		}
	}
	if limit >= 0 && len(e.b) > limit {
		return nil, false
	}
	return e.b, true
}

// DecodeDiff decodes what EncodeDiff wrote for a diff of zone.
func DecodeDiff(zone string, b []byte) (Diff, error) {
	d, err := decodeDiff(zone, b)
	if err != nil {
		return Diff{}, fmt.Errorf("store: decode diff of zone %s: %w", zone, err)
	}
	return d, nil
}

// DiffSerials returns the From and To serials of an encoded diff without
// decoding its records, to find where a journal starts cheaply.
func DiffSerials(b []byte) (from, to Serial, err error) {
	if len(b) < 9 || b[0] != formatDiff {
		return 0, 0, fmt.Errorf("store: decode diff serials: not an encoded diff of at least 9 bytes")
	}
	return Serial(binary.BigEndian.Uint32(b[1:5])), Serial(binary.BigEndian.Uint32(b[5:9])), nil
}

func decodeDiff(zone string, b []byte) (Diff, error) {
	d := recDecoder{zone: zoneSuffix(zone), b: b, withSource: true}
	if err := d.format(formatDiff); err != nil {
		return Diff{}, err
	}
	from, err := d.uint32("from serial")
	if err != nil {
		return Diff{}, err
	}
	to, err := d.uint32("to serial")
	if err != nil {
		return Diff{}, err
	}
	diff := Diff{Zone: zone, From: Serial(from), To: Serial(to)}
	if diff.Removed, err = d.list("removed"); err != nil {
		return Diff{}, err
	}
	if diff.Added, err = d.list("added"); err != nil {
		return Diff{}, err
	}
	if d.off != len(d.b) {
		return Diff{}, fmt.Errorf("%d trailing bytes", len(d.b)-d.off)
	}
	return diff, nil
}

// zoneSuffix is what a relative name is completed with: ".zone." (a
// trailing dot on zone is tolerated).
func zoneSuffix(zone string) string {
	return "." + strings.TrimSuffix(zone, ".") + "."
}

// absName completes a relative name; the empty name is the apex.
func absName(rel, suffix string) string {
	if rel == "" {
		return suffix[1:]
	}
	return rel + suffix
}

// relName returns name relative to the zone, or ok false when name is not
// inside it (or would not come back the same from absName).
func relName(name, suffix string) (rel string, ok bool) {
	if name == suffix[1:] {
		return "", true
	}
	rel, ok = strings.CutSuffix(name, suffix)
	if !ok || rel == "" {
		return "", false
	}
	return rel, true
}
