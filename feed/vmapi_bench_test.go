package feed

import (
	"context"
	"encoding/json"
	"net/http/httptest"
	"testing"
)

func BenchmarkDecodeVM(b *testing.B) {
	c := newVMCloud(50)
	var raws [][]byte
	for _, v := range c.Fixture().VMs {
		raw, err := json.Marshal(v)
		if err != nil {
			b.Fatal(err)
		}
		raws = append(raws, raw)
	}
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		if _, err := decodeVM(raws[i%len(raws)]); err != nil {
			b.Fatal(err)
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
		l, err := v.list(context.Background())
		if err != nil {
			b.Fatal(err)
		}
		if len(l.VMs) != want {
			b.Fatalf("listed %d VMs, want %d", len(l.VMs), want)
		}
	}
}
