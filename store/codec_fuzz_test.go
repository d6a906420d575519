package store

import (
	"slices"
	"strings"
	"testing"

	"github.com/cnsd/cnsd/zonegen"
)

// codecFuzzRecords derives records from fuzz input: one per line, fields
// name, type and data separated by tabs. A name without a trailing dot is
// made relative to zone ("@" is the apex); others stay as they are, so
// names outside the zone and odd bytes are covered too. "$" stands for
// source, which the encoding cuts out of names and data.
func codecFuzzRecords(zone, source, in string) []Record {
	in = strings.ReplaceAll(in, "$", source)
	var recs []Record
	for line := range strings.SplitSeq(in, "\n") {
		f := strings.SplitN(line, "\t", 3)
		for len(f) < 3 {
			f = append(f, "")
		}
		name := f[0]
		switch {
		case name == "@":
			name = strings.TrimSuffix(zone, ".") + "."
		case !strings.HasSuffix(name, "."):
			name += "." + strings.TrimSuffix(zone, ".") + "."
		}
		var typ uint16
		for _, c := range []byte(f[1]) {
			typ = typ*31 + uint16(c)
		}
		recs = append(recs, Record{Name: name, Type: zonegen.Type(typ), Data: f[2], Source: source})
	}
	slices.SortFunc(recs, Record.Compare)
	return recs
}

func FuzzDecodeVMRecords(f *testing.F) {
	f.Add([]byte{}, "dc1.example.com", "vm-1\tA\t198.51.0.1\nvm-1\tAAAA\t2001:db8::1\n@\tTXT\t\"x\"")
	f.Add(EncodeVMRecords("z", codecSample()), "z", "a.b.\tCNAME\tc.")
	f.Add([]byte{1, 0}, "", "\n\n")
	f.Add([]byte{1, 9, 'a'}, "example.org.", "x..\t\t")
	f.Add([]byte{1, 11, 1, 'a', 'b'}, "z", "$.inst.u1\tA\t198.51.0.1\n$.inst.u1\tTXT\t\"$\"\n$.other.\t\t$$")
	f.Fuzz(func(t *testing.T, b []byte, zone, in string) {
		// Arbitrary bytes: an error or records that encode back to the same.
		if recs, err := DecodeVMRecords(zone, codecVM, b); err == nil {
			again, err := DecodeVMRecords(zone, codecVM, EncodeVMRecords(zone, recs))
			if err != nil || !slices.Equal(again, recs) {
				t.Fatalf("re-encoding decoded records: %v, %v != %v", err, again, recs)
			}
		}
		recs := codecFuzzRecords(zone, codecVM, in)
		enc := EncodeVMRecords(zone, recs)
		if len(enc) > VMRecordsBound(recs) {
			t.Fatalf("%d bytes encoded, over the bound %d, for %q", len(enc), VMRecordsBound(recs), recs)
		}
		got, err := DecodeVMRecords(zone, codecVM, enc)
		if err != nil {
			t.Fatalf("decode(encode(%v)): %v", recs, err)
		}
		if !slices.Equal(got, recs) {
			t.Fatalf("round trip:\n got %q\nwant %q", got, recs)
		}
	})
}

func FuzzDecodeDiff(f *testing.F) {
	f.Add([]byte{}, "dc1.example.com", "vm-1\tA\t198.51.0.1", "vm-2\tA\t198.51.0.2\n@\tTXT\t\"x\"")
	f.Add(EncodeDiff(Diff{Zone: "z", From: 1, To: 2, Added: codecSample()}), "z", "", "a.b.\tCNAME\tc.")
	f.Add([]byte{formatDiff, 0, 0, 0, 1, 0, 0, 0, 2, 1, 0, 1, 0, 1, 0}, "", "\n", "")
	f.Fuzz(func(t *testing.T, b []byte, zone, removed, added string) {
		if d, err := DecodeDiff(zone, b); err == nil {
			again, err := DecodeDiff(zone, EncodeDiff(d))
			if err != nil || !codecDiffEqual(again, d) {
				t.Fatalf("re-encoding decoded diff: %v, %+v != %+v", err, again, d)
			}
		}
		// Sources vary: the first field of each line's data picks one.
		d := Diff{Zone: zone, From: Serial(len(removed)), To: Serial(len(b)) << 20,
			Removed: codecFuzzRecords(zone, "", removed), Added: codecFuzzRecords(zone, "", added)}
		for _, list := range [][]Record{d.Removed, d.Added} {
			for i := range list {
				list[i].Source, _, _ = strings.Cut(list[i].Data, " ")
			}
		}
		got, err := DecodeDiff(zone, EncodeDiff(d))
		if err != nil {
			t.Fatalf("decode(encode(%+v)): %v", d, err)
		}
		if !codecDiffEqual(got, d) {
			t.Fatalf("round trip:\n got %+v\nwant %+v", got, d)
		}
	})
}
