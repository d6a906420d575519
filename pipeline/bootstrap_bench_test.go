package pipeline

import (
	"context"
	"log/slog"
	"path/filepath"
	"testing"
	"time"

	"github.com/cnsd/cnsd/mockcloud"
	"github.com/cnsd/cnsd/store"
	"github.com/cnsd/cnsd/store/redistest"
	"github.com/cnsd/cnsd/zonegen"
)

// BenchmarkBootstrap measures a first start over a cloud of 100k VMs
// (2,000 with -short): from starting the feeds, the pipeline and a fresh
// store until the store holds every record the oracle computes from the
// cloud. Everything is real but the cloud: HTTP listing of VMAPI in pages
// of 1,000, UFDS lookups in slapd, CNAPI and NAPI over HTTP, and the store
// on a bbolt file (embedded) or a redis-server (AOF, fsync always).
//
//	go test ./pipeline -run '^$' -bench Bootstrap -benchtime 1x -count 3
func BenchmarkBootstrap(b *testing.B) {
	vms, accounts, servers := 100_000, 1_000, 100
	if testing.Short() {
		vms, accounts, servers = 2_000, 50, 5
	}
	f := mockcloud.Generate(mockcloud.GenOptions{VMs: vms, Accounts: accounts, Servers: servers, Seed: 5})
	s := Settings{Naming: zonegen.Config{UseAlias: true, UseLogin: true, Zones: []zonegen.ZoneConfig{
		{Name: "pub.example.com", Networks: []string{f.NetworkPools[0].UUID}},
		{Name: "dc1.cns.example.com", Networks: []string{"*"}},
	}}}
	w := newWorld(b, f)
	w.level, w.limit = slog.LevelInfo, 3*time.Minute
	want := 0
	for _, recs := range oracle(b, f, s, w.clock.Now()) {
		want += len(recs)
	}
	backends := []struct {
		name string
		open func(b *testing.B) store.Backend
	}{
		{"embedded", func(b *testing.B) store.Backend {
			bolt, err := store.OpenBolt(filepath.Join(b.TempDir(), "cnsd.db"), store.BoltOptions{})
			if err != nil {
				b.Fatal(err)
			}
			return bolt
		}},
		{"redis", func(b *testing.B) store.Backend {
			r, err := store.OpenRedis(context.Background(), redistest.Start(b).URL(), store.RedisOptions{})
			if err != nil {
				b.Fatal(err)
			}
			return r
		}},
	}
	for _, be := range backends {
		b.Run(be.name, func(b *testing.B) {
			var elapsed time.Duration
			for b.Loop() {
				b.StopTimer()
				backend := be.open(b)
				w.t = b
				b.StartTimer()
				start := time.Now()
				w.start(s, backend)
				w.waitFor("the bootstrap", func() bool { return countRecords(w.store) == want && w.p.Idle() })
				elapsed += time.Since(start)
				b.StopTimer()
				w.stop()
				backend.Close()
				b.StartTimer()
			}
			per := elapsed.Seconds() / float64(b.N)
			b.ReportMetric(float64(vms)/per, "vms/s")
			b.ReportMetric(float64(want), "records")
			b.ReportMetric(per, "s/bootstrap")
		})
	}
}

// countRecords counts the records st serves, cheaply enough to ask often
// while a bootstrap runs (the world writes no records but the VMs').
func countRecords(st *store.Store) int {
	n := 0
	for _, zone := range st.Zones() {
		if snap := st.Snapshot(zone); snap != nil {
			n += snap.Len()
		}
	}
	return n
}
