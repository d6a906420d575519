package store

import (
	"context"
	"errors"
	"math/rand"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cnsd/cnsd/zonegen"
)

func TestFollow(t *testing.T) {
	mem := NewMemory()
	w, _ := open(t, mem, Options{JournalEntries: 2})
	const rev = "0.0.10.in-addr.arpa."
	commit(t, w, contrib("vm1", map[string][]Record{zone: {a("a.example.com.", "10.0.0.1", "vm1")}}))

	f, _ := open(t, mem, Options{JournalEntries: 2})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- f.Follow(ctx, mem) }()
	defer func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("Follow = %v", err)
		}
	}()
	steps := []struct {
		name string
		cs   []zonegen.Contribution
	}{
		{"a second VM and a reverse zone", []zonegen.Contribution{contrib("vm2", map[string][]Record{
			zone: {a("a.example.com.", "10.0.0.1", "vm2"), a("b.example.com.", "10.0.0.2", "vm2")},
			rev:  {ptr("2.0.0.10.in-addr.arpa.", "b.example.com.", "vm2")}})}},
		{"a shared record loses one provider", []zonegen.Contribution{{VM: "vm1"}}},
		{"the reverse zone goes", []zonegen.Contribution{contrib("vm2", map[string][]Record{zone: {a("b.example.com.", "10.0.0.2", "vm2")}})}},
		{"many commits past the journal", nil},
	}
	for _, st := range steps {
		t.Run(st.name, func(t *testing.T) {
			if st.cs == nil {
				for i := range 5 {
					commit(t, w, contrib("vm3", map[string][]Record{zone: {a("c.example.com.", "10.0.1."+string(rune('0'+i)), "vm3")}}))
				}
			} else {
				commit(t, w, st.cs...)
			}
			waitSame(t, w, f)
		})
	}
	if _, err := f.Commit(ctx, nil); !errors.Is(err, ErrFollowing) {
		t.Errorf("Commit on a follower = %v, want ErrFollowing", err)
	}
}

// waitSame waits until f serves what w serves, at the same serials.
func waitSame(t *testing.T, w, f *Store) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		diff := sameAs(w, f)
		if diff == "" {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("follower never caught up: %s", diff)
		}
		time.Sleep(time.Millisecond)
	}
}

func sameAs(w, f *Store) string {
	if !slices.Equal(w.Zones(), f.Zones()) {
		return "zones differ"
	}
	for _, z := range w.Zones() {
		if w.Snapshot(z).Serial() != f.Snapshot(z).Serial() {
			return "serial of " + z
		}
		if !slices.EqualFunc(all(w, z), all(f, z), func(x, y Record) bool { return rrCompare(x, y) == 0 }) {
			return "records of " + z
		}
		if w.Snapshot(z).LargestRRset() != f.Snapshot(z).LargestRRset() {
			return "largest RRset of " + z
		}
	}
	return ""
}

// TestRandomFollow follows a writer making random commits, with a short
// journal so that the follower sometimes takes whole zones, and checks
// after each commit that it catches up with the same serials and records.
func TestRandomFollow(t *testing.T) {
	rng := rand.New(rand.NewSource(7))
	mem := NewMemory()
	w, clk := open(t, mem, Options{JournalEntries: 3})
	f, _ := open(t, mem, Options{JournalEntries: 3})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- f.Follow(ctx, mem) }()
	defer func() {
		cancel()
		<-done
	}()
	now := t0
	for range 150 {
		now = now.Add(time.Duration(rng.Intn(20)) * time.Second)
		clk.Set(now)
		for range 1 + rng.Intn(3) { // several commits between catch-ups
			commit(t, w, randomContribution(rng), randomContribution(rng))
		}
		waitSame(t, w, f)
	}
}

// TestReadersDuringCommits reads snapshots while commits run, for the
// race detector.
func TestReadersDuringCommits(t *testing.T) {
	rng := rand.New(rand.NewSource(3))
	s, _ := open(t, NewMemory(), Options{})
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	for range 2 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for ctx.Err() == nil {
				for _, z := range s.Zones() {
					snap := s.Snapshot(z)
					if snap == nil {
						continue
					}
					n := 0
					for r := range snap.All() {
						_ = snap.Lookup(r.Name)
						n++
					}
					if n != snap.Len() {
						t.Errorf("zone %s: All gave %d records, Len %d", z, n, snap.Len())
					}
					_, _ = s.DiffSince(z, snap.Serial()-1)
				}
			}
		}()
	}
	for range 200 {
		commit(t, s, randomContribution(rng))
	}
	cancel()
	wg.Wait()
}

// gapped is a Follower whose journal skips a serial for any since but 0.
type gapped struct{ *Memory }

func (g gapped) Since(ctx context.Context, zone string, since Serial) ([]Diff, *ZoneData, error) {
	diffs, zd, err := g.Memory.Since(ctx, zone, since)
	if since != 0 && len(diffs) > 0 {
		diffs[0].From = since + 12345
	}
	return diffs, zd, err
}

func TestFollowJournalGap(t *testing.T) {
	mem := NewMemory()
	w, _ := open(t, mem, Options{JournalEntries: 1})
	commit(t, w, contrib("vm1", map[string][]Record{zone: {a("a.example.com.", "10.0.0.1", "vm1")}}))
	commit(t, w, contrib("vm1", map[string][]Record{zone: {a("a.example.com.", "10.0.0.2", "vm1")}}))
	f, _ := open(t, mem, Options{})
	commit(t, w, contrib("vm1", map[string][]Record{zone: {a("a.example.com.", "10.0.0.3", "vm1")}}))
	if err := f.catchUp(context.Background(), gapped{mem}); err != nil {
		t.Fatalf("catchUp over a gap: %v", err)
	}
	if d := sameAs(w, f); d != "" {
		t.Errorf("after a gap the follower differs: %s", d)
	}
}

// sinceCounter is a Follower counting the zones asked for by Since.
type sinceCounter struct {
	*Memory
	calls atomic.Int64
}

func (c *sinceCounter) Since(ctx context.Context, zone string, since Serial) ([]Diff, *ZoneData, error) {
	c.calls.Add(1)
	return c.Memory.Since(ctx, zone, since)
}

// TestFollowerUnconfirmedBehindNotLoaded: a zone a follower served beyond
// the store after lost commits is not loaded from the backend at each
// catch-up while the backend's serial (listed cheaply) is still behind;
// once the writer writes past it, it is taken whole.
func TestFollowerUnconfirmedBehindNotLoaded(t *testing.T) {
	m, n, f, served := afterLostCommits(t, contrib("vm2", map[string][]Record{zoneFwd: {fwd("vm2", "two", "192.0.2.2")}}))
	c := &sinceCounter{Memory: m}
	ctx := context.Background()
	for range 5 {
		if err := f.catchUp(ctx, c); !errors.Is(err, errBackendBehind) {
			t.Fatalf("catch-up with the backend behind: %v, want errBackendBehind", err)
		}
	}
	if got := c.calls.Load(); got != 0 {
		t.Errorf("%d zone loads while the backend was behind, want none", got)
	}
	if got := f.Snapshot(zoneFwd).Serial(); got != served {
		t.Fatalf("follower serves %d, want %d as before", got, served)
	}
	commit(t, n, contrib("vm4", map[string][]Record{zoneFwd: {fwd("vm4", "four", "192.0.2.4")}}))
	commit(t, n, contrib("vm5", map[string][]Record{zoneFwd: {fwd("vm5", "five", "192.0.2.5")}}))
	if !served.Less(n.Snapshot(zoneFwd).Serial()) {
		t.Fatalf("writer at %d, not past %d", n.Snapshot(zoneFwd).Serial(), served)
	}
	if err := f.catchUp(ctx, c); err != nil {
		t.Fatalf("catch-up with the backend past: %v", err)
	}
	if got, want := len(all(f, zoneFwd)), len(all(n, zoneFwd)); got != want || f.Snapshot(zoneFwd).Serial() != n.Snapshot(zoneFwd).Serial() {
		t.Errorf("follower at %d with %d records, the writer at %d with %d", f.Snapshot(zoneFwd).Serial(), got, n.Snapshot(zoneFwd).Serial(), want)
	}
}
