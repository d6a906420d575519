package store

import (
	"context"
	"errors"
	"maps"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/cnsd/cnsd/zonegen"
)

// a returns an A record of vm.
func a(name, addr, vm string) Record {
	return Record{Name: name, Type: zonegen.TypeA, Data: addr, Source: vm}
}

// ptr returns a PTR record of vm.
func ptr(name, target, vm string) Record {
	return Record{Name: name, Type: zonegen.TypePTR, Data: target, Source: vm}
}

// contrib builds vm's contribution from records, grouped into zones by
// the zone each record's name is in (zones listed longest first).
func contrib(vm string, zoneRecs map[string][]Record) zonegen.Contribution {
	c := zonegen.Contribution{VM: vm}
	for _, zone := range slices.Sorted(maps.Keys(zoneRecs)) {
		recs := slices.Clone(zoneRecs[zone])
		slices.SortFunc(recs, Record.Compare)
		c.Zones = append(c.Zones, zonegen.ZoneRecords{Zone: zone, Records: recs})
	}
	return c
}

// fakeClock is a settable clock for serials.
type fakeClock struct {
	mu sync.Mutex // guards t
	t  time.Time
}

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *fakeClock) Set(t time.Time) {
	c.mu.Lock()
	c.t = t
	c.mu.Unlock()
}

var t0 = time.Date(2026, 11, 22, 1, 0, 0, 0, time.UTC)

// open returns a Store over b with a fake clock at t0.
func open(t testing.TB, b Backend, opts Options) (*Store, *fakeClock) {
	t.Helper()
	clk := &fakeClock{t: t0}
	if opts.Clock == nil {
		opts.Clock = clk.Now
	}
	s, err := Open(context.Background(), b, opts, nil)
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	return s, clk
}

func commit(t testing.TB, s *Store, cs ...zonegen.Contribution) []Diff {
	t.Helper()
	d, err := s.Commit(context.Background(), cs)
	if err != nil {
		t.Fatalf("Commit: %v", err)
	}
	return d
}

// all returns every served record of zone, sorted by Record.Compare.
func all(s *Store, zone string) []Record {
	snap := s.Snapshot(zone)
	if snap == nil {
		return nil
	}
	out := slices.Collect(snap.All())
	slices.SortFunc(out, Record.Compare)
	return out
}

// failing wraps a Backend; Apply fails while fail is set.
type failing struct {
	Backend
	mu   sync.Mutex // guards fail
	fail bool
}

var errInjected = errors.New("injected apply failure")

func (f *failing) set(fail bool) {
	f.mu.Lock()
	f.fail = fail
	f.mu.Unlock()
}

func (f *failing) Apply(ctx context.Context, epoch uint64, changes []ZoneChange) error {
	f.mu.Lock()
	fail := f.fail
	f.mu.Unlock()
	if fail {
		return errInjected
	}
	return f.Backend.Apply(ctx, epoch, changes)
}
