package store

import (
	"slices"
	"strings"
	"testing"

	"github.com/cnsd/cnsd/zonegen"
)

const codecVM = "c0000000-0000-4000-8000-000000000001"

// codecSample are one VM's records in dc1.example.com as zonegen makes
// them: several types under one name, an apex record and a name outside
// the zone (which must survive too).
func codecSample() []Record {
	const vm = codecVM
	return []Record{
		{Name: "dc1.example.com.", Type: zonegen.TypeTXT, Data: `"apex"`, Source: vm},
		{Name: "_web._tcp.web.svc.u1.dc1.example.com.", Type: zonegen.TypeSRV, Data: "0 10 80 vm-1.inst.u1.dc1.example.com.", Source: vm},
		{Name: "c0000000-0000-4000-8000-000000000001.inst.u1.dc1.example.com.", Type: zonegen.TypeA, Data: "198.51.0.1", Source: vm},
		{Name: "vm-1.inst.u1.dc1.example.com.", Type: zonegen.TypeA, Data: "198.51.0.1", Source: vm},
		{Name: "vm-1.inst.u1.dc1.example.com.", Type: zonegen.TypeAAAA, Data: "2001:db8::1", Source: vm},
		{Name: "vm-1.inst.u1.dc1.example.com.", Type: zonegen.TypeTXT, Data: `"c0000000-0000-4000-8000-000000000001"`, Source: vm},
		{Name: "web.svc.u1.dc1.example.com.", Type: zonegen.TypeA, Data: "198.51.0.1", Source: vm},
		{Name: "outside.example.org.", Type: zonegen.TypeCNAME, Data: "vm-1.inst.u1.dc1.example.com.", Source: vm},
		{Name: "x..dc1.example.com.", Type: 65535, Data: "", Source: vm},
	}
}

func TestVMRecordsRoundTrip(t *testing.T) {
	tests := []struct {
		name, zone string
		recs       []Record
	}{
		{"empty", "dc1.example.com", nil},
		{"sample", "dc1.example.com", codecSample()},
		{"zone with dot", "dc1.example.com.", codecSample()},
		{"root zone", "", codecSample()},
		{"other zone", "example.org", codecSample()},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := EncodeVMRecords(tt.zone, tt.recs)
			got, err := DecodeVMRecords(tt.zone, codecVM, b)
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(got, tt.recs) {
				t.Errorf("round trip:\n got %v\nwant %v", got, tt.recs)
			}
		})
	}
}

func TestVMRecordsSize(t *testing.T) {
	recs := codecSample()[:7]
	b := EncodeVMRecords("dc1.example.com", recs)
	// Relative names and back-references: well under the data's size.
	if perRec := len(b) / len(recs); perRec > 40 {
		t.Errorf("%d bytes per record, want at most 40", perRec)
	}
}

func TestDiffRoundTrip(t *testing.T) {
	other := codecSample()
	for i := range other {
		other[i].Source = "c0000000-0000-4000-8000-000000000002"
	}
	tests := []struct {
		name string
		d    Diff
	}{
		{"empty", Diff{Zone: "dc1.example.com", From: 1, To: 2}},
		{"added", Diff{Zone: "dc1.example.com", From: 0, To: 0xffffffff, Added: codecSample()}},
		{"both", Diff{Zone: "dc1.example.com", From: 7, To: 8, Removed: other, Added: codecSample()}},
		{"mixed sources", Diff{Zone: "example.org", From: 7, To: 8, Added: append(codecSample(), other...)}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := DecodeDiff(tt.d.Zone, EncodeDiff(tt.d))
			if err != nil {
				t.Fatal(err)
			}
			if !codecDiffEqual(got, tt.d) {
				t.Errorf("round trip:\n got %+v\nwant %+v", got, tt.d)
			}
		})
	}
}

func codecDiffEqual(a, b Diff) bool {
	return a.Zone == b.Zone && a.From == b.From && a.To == b.To &&
		slices.Equal(a.Removed, b.Removed) && slices.Equal(a.Added, b.Added)
}

func TestDecodeMalformed(t *testing.T) {
	valid := EncodeVMRecords("z", codecSample()[:2])
	validDiff := EncodeDiff(Diff{Zone: "z", From: 1, To: 2, Added: codecSample()[:1]})
	tests := []struct {
		name string
		diff bool
		in   []byte
		want string
	}{
		{"empty", false, nil, "empty value"},
		{"wrong format", false, []byte{formatDiff}, "format byte 2, want 1"},
		{"back-reference first", false, []byte{1, 0, 0, 1, 0}, "name refers back"},
		{"name truncated", false, []byte{1, 9, 'a'}, "record 0: name of 2 bytes truncated at 1"},
		{"cut beyond name", false, []byte{1, 11, 5, 'a', 'b'}, "name cut position 5 beyond its 2 bytes"},
		{"cut beyond data", false, []byte{1, 1, 0, 1, 3, 2, 'a'}, "data cut position 2 beyond its 1 bytes"},
		{"type truncated", false, []byte{1, 1, 0}, "type of 2 bytes truncated"},
		{"data truncated", false, valid[:len(valid)-1], "record 1: data of"},
		{"bad varint", false, []byte{1, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 1}, "bad or truncated varint"},
		{"huge length", false, []byte{1, 0xfd, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x7f}, "bytes truncated at 0"},
		{"diff empty", true, nil, "empty value"},
		{"diff serial truncated", true, []byte{formatDiff, 0, 0, 0}, "from serial of 4 bytes truncated"},
		{"diff count too large", true, []byte{formatDiff, 0, 0, 0, 1, 0, 0, 0, 2, 0xff, 1}, "removed count 255 too large"},
		{"diff trailing", true, append(slices.Clone(validDiff), 7), "1 trailing bytes"},
		{"diff source back-reference first", true, []byte{formatDiff, 0, 0, 0, 1, 0, 0, 0, 2, 1, 0, 1, 0, 1, 0}, "source refers back"},
		{"diff added truncated", true, validDiff[:len(validDiff)-3], "added record 0: data of"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var err error
			if tt.diff {
				_, err = DecodeDiff("z", tt.in)
			} else {
				_, err = DecodeVMRecords("z", codecVM, tt.in)
			}
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("error %v, want one containing %q", err, tt.want)
			}
		})
	}
}
