package feed

import (
	"encoding/json"
	"testing"

	"github.com/cnsd/cnsd/mockcloud"
)

// BenchmarkDecodeServers decodes a listing of a large cloud's compute
// nodes, sysinfo included, as every poll does.
func BenchmarkDecodeServers(b *testing.B) {
	f := mockcloud.Generate(mockcloud.GenOptions{VMs: 1, Accounts: 1, Servers: 1000, Seed: 1})
	body, err := json.Marshal(f.Servers)
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(body)))
	for b.Loop() {
		servers, bad, err := decodeServers(body)
		if err != nil || len(bad) != 0 || len(servers) != 1000 {
			b.Fatalf("decoded %d servers, %d bad, err %v", len(servers), len(bad), err)
		}
	}
}

// BenchmarkNAPINetworkCached is the view builder's common case: a network
// already in the cache, resolved with its pools.
func BenchmarkNAPINetworkCached(b *testing.B) {
	tc := newTestCloud(b)
	n := newTestNAPI(tc, &clock{t: testNow}, nil)
	for b.Loop() {
		if _, err := n.Network(b.Context(), netExt); err != nil {
			b.Fatal(err)
		}
	}
}
