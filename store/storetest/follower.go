package storetest

import (
	"context"
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/cnsd/cnsd/store"
)

// waitLimit bounds waits for a channel so that a broken backend fails the
// test instead of hanging it; it is not a performance assertion.
const waitLimit = 10 * time.Second

func testFollowerSince(t *testing.T, b store.Backend) {
	f, ok := b.(store.Follower)
	if !ok {
		t.Skip("backend is not a store.Follower")
	}
	m := model{}
	mustApply(t, b, m, m.change(zoneA, vms(zoneA, 0, 5, 0), nil, 3))
	start := m[zoneA].Serial
	for v := 1; v <= 4; v++ {
		mustApply(t, b, m, m.change(zoneA, vms(zoneA, v, v+1, v), nil, 3))
	}
	z := m[zoneA]
	tests := []struct {
		name  string
		since store.Serial
		diffs []store.Diff
		full  bool
	}{
		{"oldest covered", z.Journal[0].From, z.Journal, false},
		{"newest covered", z.Journal[2].From, z.Journal[2:], false},
		{"current", z.Serial, nil, false},
		{"trimmed", start, nil, true},
		{"never existed", start - 1000, nil, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			diffs, full, err := f.Since(t.Context(), zoneA, tt.since)
			if err != nil {
				t.Fatalf("Since(%d): %v", tt.since, err)
			}
			if !slices.EqualFunc(diffs, tt.diffs, diffEqual) {
				t.Errorf("Since(%d) diffs\n got %v\nwant %v", tt.since, diffs, tt.diffs)
			}
			switch {
			case tt.full && full == nil:
				t.Errorf("Since(%d): no full zone", tt.since)
			case tt.full:
				checkZone(t, full, z)
			case full != nil:
				t.Errorf("Since(%d): full zone, want diffs only", tt.since)
			}
		})
	}
	diffs, full, err := f.Since(t.Context(), "missing.example.com", 1)
	if diffs != nil || full != nil || err != nil {
		t.Errorf("Since of a missing zone = %v, %v, %v; want nils", diffs, full, err)
	}
	zones, err := f.Zones(t.Context())
	if err != nil || !slices.Equal(zones, []string{zoneA}) {
		t.Errorf("Zones = %v, %v; want [%s]", zones, err, zoneA)
	}
}

func testFollowerChanged(t *testing.T, b store.Backend) {
	f, ok := b.(store.Follower)
	if !ok {
		t.Skip("backend is not a store.Follower")
	}
	ctx, cancel := context.WithCancel(t.Context())
	ch := f.Changed(ctx)
	m := model{}
	mustApply(t, b, m, m.change(zoneA, vms(zoneA, 0, 5, 0), nil, keep))
	select {
	case _, ok := <-ch:
		if !ok {
			t.Fatal("Changed channel closed before its context ended")
		}
	case <-time.After(waitLimit):
		t.Fatalf("no value on Changed within %v of Apply", waitLimit)
	}
	cancel()
	deadline := time.After(waitLimit)
	for {
		select {
		case _, ok := <-ch:
			if !ok {
				return
			}
		case <-deadline:
			t.Fatalf("Changed channel not closed within %v of its context ending", waitLimit)
		}
	}
}

func testLeaser(t *testing.T, b store.Backend) {
	l, ok := b.(store.Leaser)
	if !ok {
		t.Skip("backend is not a store.Leaser")
	}
	ctx, cancel := context.WithTimeout(t.Context(), waitLimit)
	defer cancel()
	e1, err := l.Acquire(ctx)
	if err != nil {
		t.Fatalf("Acquire: %v", err)
	}
	m := model{}
	first := m.change(zoneA, vms(zoneA, 0, 2, 0), nil, keep)
	if err := b.Apply(ctx, e1, []store.ZoneChange{first}); err != nil {
		t.Fatalf("Apply with epoch %d: %v", e1, err)
	}
	m.apply(first)
	if err := l.Release(ctx, e1); err != nil {
		t.Fatalf("Release: %v", err)
	}
	e2, err := l.Acquire(ctx)
	if err != nil || e2 <= e1 {
		t.Fatalf("second Acquire = %d, %v; want an epoch above %d", e2, err, e1)
	}
	second := m.change(zoneA, vms(zoneA, 0, 1, 1), nil, keep)
	if err := b.Apply(ctx, e2, []store.ZoneChange{second}); err != nil {
		t.Fatalf("Apply with epoch %d: %v", e2, err)
	}
	m.apply(second)
	stale := m.change(zoneA, vms(zoneA, 1, 2, 1), nil, keep)
	if err := b.Apply(ctx, e1, []store.ZoneChange{stale}); !errors.Is(err, store.ErrFenced) {
		t.Errorf("Apply with released epoch %d after %d: %v, want ErrFenced", e1, e2, err)
	}
	m.check(t, b)
	if err := l.Release(ctx, e2); err != nil {
		t.Fatalf("Release: %v", err)
	}
}
