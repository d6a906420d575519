package store

import (
	"context"
	"testing"
	"time"
)

// TestSnapshotCommitted: a snapshot carries when its serial was
// committed, by the writer's clock; a zone a commit leaves alone keeps
// its time; a store that loads the zones knows no time; a follower
// stamps a diff with the time it applied it.
func TestSnapshotCommitted(t *testing.T) {
	const other = "other.example."
	mem := NewMemory()
	w, clk := open(t, mem, Options{})
	commit(t, w, contrib("vm1", map[string][]Record{zone: {a("a.example.com.", "10.0.0.1", "vm1")},
		other: {a("a.other.example.", "10.0.0.1", "vm1")}}))
	if got := w.Snapshot(zone).Committed(); !got.Equal(t0) {
		t.Errorf("first commit: Committed = %v, want %v", got, t0)
	}
	t1 := t0.Add(45 * time.Second)
	clk.Set(t1)
	commit(t, w, contrib("vm2", map[string][]Record{zone: {a("b.example.com.", "10.0.0.2", "vm2")}}))
	if got := w.Snapshot(zone).Committed(); !got.Equal(t1) {
		t.Errorf("second commit: Committed = %v, want %v", got, t1)
	}
	if got := w.Snapshot(other).Committed(); !got.Equal(t0) {
		t.Errorf("zone the second commit left alone: Committed = %v, want %v", got, t0)
	}

	f, fclk := open(t, mem, Options{})
	if got := f.Snapshot(zone).Committed(); !got.IsZero() {
		t.Errorf("loaded zone: Committed = %v, want zero", got)
	}
	t2 := t0.Add(time.Hour)
	fclk.Set(t2)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- f.Follow(ctx, mem) }()
	defer func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("Follow = %v", err)
		}
	}()
	clk.Set(t0.Add(2 * time.Minute))
	commit(t, w, contrib("vm3", map[string][]Record{zone: {a("c.example.com.", "10.0.0.3", "vm3")}}))
	waitSame(t, w, f)
	if got := f.Snapshot(zone).Committed(); !got.Equal(t2) {
		t.Errorf("follower: Committed = %v, want the time it applied the diff, %v", got, t2)
	}
}
