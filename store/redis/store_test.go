package redis

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/cnsd/cnsd/store"
	"github.com/cnsd/cnsd/zonegen"
)

// Helpers for the tests that run a store.Store over Redis.

// openStore opens a Store over b whose clock stands still, so that
// serials depend only on the commits.
func openStore(tb testing.TB, b store.Backend, opts store.Options) *store.Store {
	tb.Helper()
	t0 := time.Date(2026, 11, 22, 1, 0, 0, 0, time.UTC)
	opts.Clock = func() time.Time { return t0 }
	s, err := store.Open(context.Background(), b, opts, nil)
	if err != nil {
		tb.Fatalf("Open: %v", err)
	}
	return s
}

// commit commits cs to s, failing tb on an error.
func commit(tb testing.TB, s *store.Store, cs ...zonegen.Contribution) {
	tb.Helper()
	if _, err := s.Commit(context.Background(), cs); err != nil {
		tb.Fatalf("Commit: %v", err)
	}
}

// contribIn is vm's contribution of recs, all in zone, sorted by
// Record.Compare.
func contribIn(vm, zone string, recs ...store.Record) zonegen.Contribution {
	return zonegen.Contribution{VM: vm, Zones: []zonegen.ZoneRecords{{Zone: zone, Records: recs}}}
}

// served returns every record s serves in zone, sorted by Record.Compare.
func served(s *store.Store, zone string) []store.Record {
	snap := s.Snapshot(zone)
	if snap == nil {
		return nil
	}
	out := slices.Collect(snap.All())
	slices.SortFunc(out, store.Record.Compare)
	return out
}

// benchVMs is the number of VMs of the bootstrap benchmarks.
func benchVMs() int {
	if testing.Short() {
		return 10_000
	}
	return 100_000
}
