package store

import (
	"context"
	"errors"
	"testing"
	"time"
)

// TestTakeoverGapSkipsLostSerials: commits a failover lost had serials a
// new writer would take again with other records (the premise, checked
// without a gap); with a TakeoverGap its first serial of each zone jumps
// past them, the journal covers none of them, a zone it creates starts
// past the time-based serial of its opening and every serial it knew,
// and later commits go on by one.
func TestTakeoverGapSkipsLostSerials(t *testing.T) {
	const gap = 10
	lostWriter := func(t *testing.T) (*Memory, *fakeClock, Serial, Serial) {
		m := NewMemory()
		w, clk := open(t, m, Options{})
		commit(t, w, contrib("vm1", map[string][]Record{zoneFwd: {fwd("vm1", "one", "192.0.2.1")}}))
		stored := w.Snapshot(zoneFwd).Serial()
		rollback := checkpoint(m)
		clk.Set(t0.Add(time.Minute))
		commit(t, w, contrib("vm2", map[string][]Record{zoneFwd: {fwd("vm2", "two", "192.0.2.2")}}))
		lost := w.Snapshot(zoneFwd).Serial()
		rollback()
		return m, clk, stored, lost
	}
	other := contrib("vm3", map[string][]Record{zoneFwd: {fwd("vm3", "three", "192.0.2.3")}})

	t.Run("without a gap the serial is reused", func(t *testing.T) {
		m, clk, _, lost := lostWriter(t)
		n, _ := open(t, m, Options{Clock: clk.Now, Epoch: 2})
		commit(t, n, other)
		if got := n.Snapshot(zoneFwd).Serial(); got != lost {
			t.Fatalf("new writer at %d, want the lost serial %d again (the collision the gap is for)", got, lost)
		}
	})

	m, clk, stored, lost := lostWriter(t)
	n, _ := open(t, m, Options{Clock: clk.Now, Epoch: 2, TakeoverGap: gap})
	commit(t, n, other)
	first := n.Snapshot(zoneFwd).Serial()
	if want := TimeSerial(clk.Now()) + gap; first != want {
		t.Fatalf("first serial after the takeover %d, want %d (the time-based serial of the opening + gap; stored %d)", first, want, stored)
	}
	if !lost.Less(first) {
		t.Fatalf("first serial %d not past the lost one %d", first, lost)
	}
	for s := stored + 1; s != first; s++ {
		if _, err := n.DiffSince(zoneFwd, s); !errors.Is(err, ErrNotCovered) {
			t.Errorf("DiffSince(%d) inside the gap: %v, want ErrNotCovered (a secondary there gets the whole zone)", s, err)
		}
	}
	if d, err := n.DiffSince(zoneFwd, stored); err != nil || len(d.Added) != 1 || len(d.Removed) != 0 {
		t.Errorf("DiffSince(%d) = %+v, %v; want vm3's record added", stored, d, err)
	}
	commit(t, n, contrib("vm4", map[string][]Record{zoneFwd: {fwd("vm4", "four", "192.0.2.4")}}))
	if got := n.Snapshot(zoneFwd).Serial(); got != first+1 {
		t.Errorf("second commit at %d, want %d: the gap comes once", got, first+1)
	}

	commit(t, n, contrib("vm5", map[string][]Record{zoneRev: {ptr("5."+zoneRev, "five."+zoneFwd, "vm5")}}))
	if got, want := n.Snapshot(zoneRev).Serial(), TimeSerial(clk.Now())+gap; got != want {
		t.Errorf("a zone new to the writer starts at %d, want %d (the time-based serial of the opening + gap)", got, want)
	}

	// A zone the store holds at a serial past the clock takes the gap
	// from its serial.
	m = NewMemory()
	w, _ := open(t, m, Options{})
	for _, addr := range []string{"192.0.2.1", "192.0.2.2", "192.0.2.3"} {
		commit(t, w, contrib("vm1", map[string][]Record{zoneFwd: {fwd("vm1", "one", addr)}}))
	}
	stored = w.Snapshot(zoneFwd).Serial()
	if stored != TimeSerial(t0)+2 {
		t.Fatalf("three commits in one time step at %d, want %d", stored, TimeSerial(t0)+2)
	}
	n, _ = open(t, m, Options{Epoch: 2, TakeoverGap: gap})
	commit(t, n, other)
	if got := n.Snapshot(zoneFwd).Serial(); got != stored+gap {
		t.Errorf("first serial after the takeover %d, want %d (the stored serial, past the clock, + gap)", got, stored+gap)
	}
	// A zone new to the writer starts past the latest serial it knew of
	// any zone (a lost commit of the writer before may have made it
	// there), here ahead of the clock.
	commit(t, n, contrib("vm5", map[string][]Record{zoneRev: {ptr("5."+zoneRev, "five."+zoneFwd, "vm5")}}))
	if got := n.Snapshot(zoneRev).Serial(); got != stored+gap {
		t.Errorf("a new zone starts at %d, want %d (the latest known serial + gap)", got, stored+gap)
	}
}

// TestTakeoverGapAfterOpenAfter: a process that served a zone beyond the
// store (it followed the writer whose commits were lost) takes the gap
// from the serial it served, not the store's.
func TestTakeoverGapAfterOpenAfter(t *testing.T) {
	const gap = 10
	m, _, f, served := afterLostCommits(t,
		contrib("vm2", map[string][]Record{zoneFwd: {fwd("vm2", "two", "192.0.2.2")}}))
	clk := &fakeClock{t: t0.Add(time.Minute)}
	w, err := OpenAfter(context.Background(), m, Options{Clock: clk.Now, Epoch: 3, TakeoverGap: gap}, nil, f)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.Verify(context.Background()); err != nil {
		t.Fatalf("Verify: %v", err)
	}
	if got, want := w.Snapshot(zoneFwd).Serial(), served+gap; got != want {
		t.Errorf("zone written back at %d, want %d (the served serial + gap)", got, want)
	}
}
