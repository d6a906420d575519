package feed

import (
	"context"
	"net/http/httptest"
	"testing"

	"github.com/cnsd/cnsd/zonegen"
)

// BenchmarkDecodeVM decodes one VM object per op (ns/op is ns/VM), by
// decodeVM and by the decoder it replaced (decodeVMRef), over VMs from
// mockcloud's generator (the bootstrap benchmark's cloud) and over the
// realistic fixture's, which carry every field VMAPI sends.
//
//	go test ./feed -run '^$' -bench DecodeVM -benchmem
func BenchmarkDecodeVM(b *testing.B) {
	sets := []struct {
		name string
		raws func(b *testing.B) [][]byte
	}{
		{"generated", func(b *testing.B) [][]byte { return generatedVMs(b, 50) }},
		{"realistic", func(b *testing.B) [][]byte {
			var raws [][]byte
			for _, raw := range realisticArrays(b)["vms"] {
				raws = append(raws, raw)
			}
			return raws
		}},
	}
	decoders := []struct {
		name   string
		decode func([]byte) (zonegen.VM, error)
	}{{"reference", decodeVMRef}, {"single-pass", decodeVM}}
	for _, set := range sets {
		for _, d := range decoders {
			b.Run(set.name+"/"+d.name, func(b *testing.B) {
				raws := set.raws(b)
				b.ReportAllocs()
				for i := 0; b.Loop(); i++ {
					if _, err := d.decode(raws[i%len(raws)]); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}

// BenchmarkVMAPIList lists 2000 VMs from mockcloud in pages of 1000.
func BenchmarkVMAPIList(b *testing.B) {
	c := newVMCloud(2000)
	srv := httptest.NewServer(c.Handler())
	defer srv.Close()
	v := NewVMAPI(VMAPIConfig{URL: srv.URL, Instance: "bench"}, nil)
	want := len(activeUUIDs(c))
	for b.Loop() {
		l, err := v.list(context.Background(), nil)
		if err != nil {
			b.Fatal(err)
		}
		if len(l.VMs) != want {
			b.Fatalf("listed %d VMs, want %d", len(l.VMs), want)
		}
	}
}
