// Shared by both backends (Redis and bbolt): the record reader and writer of codec.go.

package store

import (
	"encoding/binary"
	"fmt"
	"strings"

	"github.com/cnsd/cnsd/zonegen"
)

// recEncoder appends records, remembering the previous name and source so
// that repeats cost one byte.
type recEncoder struct {
	b          []byte
	zone       string // zoneSuffix of the zone
	withSource bool
	have       bool // a record was written: prevName, prevSource are set
	prevName   string
	prevSource string
}

func (e *recEncoder) record(r Record) {
	if e.withSource {
		e.source(r.Source)
	}
	e.name(r.Name, r.Source)
	e.b = binary.BigEndian.AppendUint16(e.b, uint16(r.Type))
	e.data(r.Data, r.Source)
	e.have, e.prevName, e.prevSource = true, r.Name, r.Source
}

// sourceAt is where src is in s, or -1 (also when src is empty).
func sourceAt(s, src string) int {
	if src == "" {
		return -1
	}
	return strings.Index(s, src)
}

// spliced writes s, or when src is at i in s, the uvarint i and s without src.
func (e *recEncoder) spliced(s, src string, i int) {
	if i < 0 {
		e.b = append(e.b, s...)
		return
	}
	e.b = binary.AppendUvarint(e.b, uint64(i))
	e.b = append(e.b, s[:i]...)
	e.b = append(e.b, s[i+len(src):]...)
}

func (e *recEncoder) data(d, src string) {
	i := sourceAt(d, src)
	h := uint64(len(d)) << 1
	if i >= 0 {
		h = uint64(len(d)-len(src))<<1 | 1
	}
	e.b = binary.AppendUvarint(e.b, h)
	e.spliced(d, src, i)
}

func (e *recEncoder) source(s string) {
	if e.have && s == e.prevSource {
		e.b = append(e.b, 0)
		return
	}
	e.b = binary.AppendUvarint(e.b, uint64(len(s))+1)
	e.b = append(e.b, s...)
}

func (e *recEncoder) name(n, src string) {
	if e.have && n == e.prevName {
		e.b = append(e.b, 0)
		return
	}
	v := uint64(1) // the whole name
	if rel, ok := relName(n, e.zone); ok {
		n, v = rel, 0
	}
	i, stored := sourceAt(n, src), len(n)
	if i >= 0 {
		v |= 2
		stored -= len(src)
	}
	v |= uint64(stored) << 2
	e.b = binary.AppendUvarint(e.b, v+1) // 0 is the back-reference
	e.spliced(n, src, i)
}

// recDecoder reads what recEncoder wrote. Every read checks the bytes
// left, so no input makes it panic, and what it allocates is bounded by
// the input's size (each record at most adds the source twice).
type recDecoder struct {
	b          []byte
	off        int
	zone       string // zoneSuffix of the zone
	vm         string // every record's Source, unless withSource
	withSource bool
	have       bool
	prevName   string
	prevSource string
}

func (d *recDecoder) format(want byte) error {
	if len(d.b) == 0 {
		return fmt.Errorf("empty value")
	}
	if d.b[0] != want {
		return fmt.Errorf("format byte %d, want %d", d.b[0], want)
	}
	d.off = 1
	return nil
}

func (d *recDecoder) list(what string) ([]Record, error) {
	n, err := d.uvarint(what + " count")
	if err != nil {
		return nil, err
	}
	if left := uint64(len(d.b) - d.off); n > left/minRecordBytes {
		return nil, fmt.Errorf("%s count %d too large for %d remaining bytes", what, n, left)
	}
	var recs []Record
	if n > 0 {
		recs = make([]Record, 0, n)
	}
	for i := range n {
		r, err := d.record()
		if err != nil {
			return nil, fmt.Errorf("%s record %d: %w", what, i, err)
		}
		recs = append(recs, r)
	}
	return recs, nil
}

func (d *recDecoder) record() (Record, error) {
	r := Record{Source: d.vm}
	var err error
	if d.withSource {
		if r.Source, err = d.source(); err != nil {
			return Record{}, err
		}
	}
	if r.Name, err = d.name(r.Source); err != nil {
		return Record{}, err
	}
	t, err := d.uint16("type")
	if err != nil {
		return Record{}, err
	}
	r.Type = zonegen.Type(t)
	if r.Data, err = d.data(r.Source); err != nil {
		return Record{}, err
	}
	d.have, d.prevName, d.prevSource = true, r.Name, r.Source
	return r, nil
}

func (d *recDecoder) source() (string, error) {
	h, err := d.uvarint("source header")
	if err != nil {
		return "", err
	}
	if h == 0 {
		if !d.have {
			return "", fmt.Errorf("source refers back but there is no previous record")
		}
		return d.prevSource, nil
	}
	b, err := d.bytes(h-1, "source")
	return string(b), err
}

func (d *recDecoder) name(src string) (string, error) {
	h, err := d.uvarint("name header")
	if err != nil {
		return "", err
	}
	switch {
	case h == 0 && !d.have:
		return "", fmt.Errorf("name refers back but there is no previous record")
	case h == 0:
		return d.prevName, nil
	}
	v := h - 1
	n, err := d.spliced(v>>2, v&2 != 0, src, "name")
	if err != nil || v&1 == 1 {
		return n, err
	}
	return absName(n, d.zone), nil
}

func (d *recDecoder) data(src string) (string, error) {
	h, err := d.uvarint("data header")
	if err != nil {
		return "", err
	}
	return d.spliced(h>>1, h&1 == 1, src, "data")
}

// spliced reads n bytes, preceded when cut is set by the position where
// src goes back in.
func (d *recDecoder) spliced(n uint64, cut bool, src, what string) (string, error) {
	var at uint64
	if cut {
		var err error
		if at, err = d.uvarint(what + " cut position"); err != nil {
			return "", err
		}
		if at > n {
			return "", fmt.Errorf("%s cut position %d beyond its %d bytes", what, at, n)
		}
	}
	b, err := d.bytes(n, what)
	if err != nil || !cut {
		return string(b), err
	}
	return string(b[:at]) + src + string(b[at:]), nil
}

func (d *recDecoder) bytes(n uint64, what string) ([]byte, error) {
	if left := uint64(len(d.b) - d.off); n > left {
		return nil, fmt.Errorf("%s of %d bytes truncated at %d", what, n, left)
	}
	b := d.b[d.off : d.off+int(n)]
	d.off += int(n)
	return b, nil
}

func (d *recDecoder) uvarint(what string) (uint64, error) {
	v, n := binary.Uvarint(d.b[d.off:])
	if n <= 0 {
		return 0, fmt.Errorf("%s: bad or truncated varint at byte %d", what, d.off)
	}
	d.off += n
	return v, nil
}

func (d *recDecoder) uint16(what string) (uint16, error) {
	b, err := d.bytes(2, what)
	if err != nil {
		return 0, err
	}
	return binary.BigEndian.Uint16(b), nil
}

func (d *recDecoder) uint32(what string) (uint32, error) {
	b, err := d.bytes(4, what)
	if err != nil {
		return 0, err
	}
	return binary.BigEndian.Uint32(b), nil
}
