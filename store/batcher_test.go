package store

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/cnsd/cnsd/zonegen"
)

// waitWatch waits for w to fire; the timeout only turns a hang into a
// failure, it asserts nothing about speed.
func waitWatch(t *testing.T, w <-chan struct{}) {
	t.Helper()
	select {
	case <-w:
	case <-time.After(10 * time.Second):
		t.Fatal("no commit happened")
	}
}

func runBatcher(t *testing.T, b *Batcher) {
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- b.Run(ctx) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("Run = %v", err)
		}
	})
}

func burst(b *Batcher, n int) {
	for i := range n {
		vm := fmt.Sprintf("vm%03d", i)
		b.Add(contrib(vm, map[string][]Record{zone: {a(vm+".example.com.", "10.0.0.1", vm)}}))
	}
}

func TestBatcherCoalescesBurst(t *testing.T) {
	s, _ := open(t, NewMemory(), Options{})
	b := NewBatcher(s, time.Millisecond, time.Hour, nil)
	burst(b, 50) // all pending before Run looks: one window, one commit
	w := s.Watch()
	runBatcher(t, b)
	waitWatch(t, w)
	snap := s.Snapshot(zone)
	if snap.Len() != 50 || len(snap.journal) != 1 {
		t.Errorf("after the burst: %d records over %d serials, want 50 over 1", snap.Len(), len(snap.journal))
	}
}

func TestBatcherMaxDelay(t *testing.T) {
	s, _ := open(t, NewMemory(), Options{})
	b := NewBatcher(s, time.Hour, time.Millisecond, nil) // only maxDelay can fire
	w := s.Watch()
	runBatcher(t, b)
	burst(b, 3)
	waitWatch(t, w)
	if s.Snapshot(zone) == nil {
		t.Errorf("maxDelay did not commit")
	}
}

func TestBatcherFlushLatestWins(t *testing.T) {
	s, _ := open(t, NewMemory(), Options{})
	b := NewBatcher(s, time.Hour, time.Hour, nil)
	runBatcher(t, b)
	v1, v2 := a("x.example.com.", "10.0.0.1", "vm"), a("x.example.com.", "10.0.0.2", "vm")
	b.Add(contrib("vm", map[string][]Record{zone: {v1}}))
	burst(b, 10)
	b.Add(contrib("vm", map[string][]Record{zone: {v2}}))
	b.Add(zonegen.Contribution{VM: "vm", Unresolved: true}) // keeps v2
	if err := b.Flush(context.Background()); err != nil {
		t.Fatal(err)
	}
	snap := s.Snapshot(zone)
	if !slices.Equal(snap.Lookup("x.example.com."), []Record{v2}) || len(snap.journal) != 1 || snap.Len() != 11 {
		t.Errorf("flush: %v, %d serials, %d records; want only the latest, one serial, 11 records",
			snap.Lookup("x.example.com."), len(snap.journal), snap.Len())
	}
}

func TestBatcherRetries(t *testing.T) {
	fb := &failing{Backend: NewMemory(), fail: true}
	s, _ := open(t, fb, Options{})
	b := NewBatcher(s, time.Millisecond, time.Millisecond, nil)
	burst(b, 2)
	if err := b.Flush(context.Background()); err == nil {
		t.Fatal("Flush over a failing backend succeeded")
	}
	if b.Pending() != 2 {
		t.Fatalf("pending after a failed flush = %d, want 2", b.Pending())
	}
	w := s.Watch()
	runBatcher(t, b)
	fb.set(false)
	waitWatch(t, w)
	if s.Snapshot(zone).Len() != 2 {
		t.Errorf("records after the retry = %d, want 2", s.Snapshot(zone).Len())
	}
}

func TestBatcherAddAllIsOneCommit(t *testing.T) {
	s, _ := open(t, NewMemory(), Options{})
	// maxDelay would cut a burst of single Adds; AddAll is taken whole.
	b := NewBatcher(s, time.Millisecond, time.Nanosecond, nil)
	w := s.Watch()
	runBatcher(t, b)
	var cs []zonegen.Contribution
	for i := range 500 {
		vm := fmt.Sprintf("vm%03d", i)
		cs = append(cs, contrib(vm, map[string][]Record{zone: {a(vm+".example.com.", "10.0.0.1", vm)}}))
	}
	cs = append(cs, zonegen.Contribution{VM: "unresolved", Unresolved: true})
	b.AddAll(cs)
	waitWatch(t, w)
	snap := s.Snapshot(zone)
	if snap.Len() != 500 || len(snap.journal) != 1 {
		t.Errorf("after AddAll: %d records over %d serials, want 500 over 1", snap.Len(), len(snap.journal))
	}
}

// gatedBackend blocks Apply until a value is sent on gate, counting the
// calls.
type gatedBackend struct {
	Backend
	gate    chan struct{}
	applies chan int // the number of zone changes of each Apply, as it starts
}

func (g *gatedBackend) Apply(ctx context.Context, epoch uint64, changes []ZoneChange) error {
	g.applies <- len(changes)
	<-g.gate
	return g.Backend.Apply(ctx, epoch, changes)
}

// TestBatcherWindowZero: with no window a lone change is committed at
// once, and the changes that arrive while that commit is under way are
// committed together by the next one.
func TestBatcherWindowZero(t *testing.T) {
	g := &gatedBackend{Backend: NewMemory(), gate: make(chan struct{}), applies: make(chan int, 10)}
	s, _ := open(t, g, Options{})
	b := NewBatcher(s, 0, time.Hour, nil)
	b.Add(contrib("vm000", map[string][]Record{zone: {a("vm000.example.com.", "10.0.0.1", "vm000")}}))
	if wait, ok := b.due(); !ok || wait > 0 {
		t.Fatalf("a lone change is due in %v (pending %v), want at once", wait, ok)
	}
	runBatcher(t, b)
	select {
	case <-g.applies: // committed without waiting for more
	case <-time.After(10 * time.Second):
		t.Fatal("a lone change was not committed")
	}
	for i := 1; i <= 5; i++ {
		vm := fmt.Sprintf("vm%03d", i)
		b.Add(contrib(vm, map[string][]Record{zone: {a(vm+".example.com.", "10.0.0.1", vm)}}))
	}
	g.gate <- struct{}{} // the first commit ends
	select {
	case <-g.applies:
	case <-time.After(10 * time.Second):
		t.Fatal("the changes made during the first commit were not committed")
	}
	g.gate <- struct{}{}
	waitFor(t, func() bool { return b.Commits() == 2 && b.Pending() == 0 }, "the second commit")
	snap := s.Snapshot(zone)
	if snap.Len() != 6 || len(snap.journal) != 2 {
		t.Errorf("%d records over %d serials, want 6 over 2", snap.Len(), len(snap.journal))
	}
}

// TestSortByVM: a batch large enough for the keyed sort comes out in
// the order of its VMs' bytes, every contribution once, for UUIDs, VM
// names sharing long prefixes and names shorter than eight bytes.
func TestSortByVM(t *testing.T) {
	rng := rand.New(rand.NewPCG(4, 4))
	for _, n := range []int{10, 1023, 1024, 5000} {
		batch := make([]zonegen.Contribution, n)
		for i := range batch {
			var vm string
			switch rng.IntN(3) {
			case 0:
				vm = fmt.Sprintf("%08x-%04x-4000-8000-%012x", rng.Uint32(), rng.IntN(1<<16), rng.Uint64()>>16)
			case 1:
				vm = fmt.Sprintf("00000000-0000-4000-8000-%012x", rng.IntN(1<<20))
			default:
				vm = fmt.Sprintf("v%d", rng.IntN(200))
			}
			batch[i] = zonegen.Contribution{VM: vm, Zones: make([]zonegen.ZoneRecords, i%5)}
		}
		want := slices.Clone(batch)
		slices.SortStableFunc(want, func(x, y zonegen.Contribution) int { return strings.Compare(x.VM, y.VM) })
		got := sortByVM(slices.Clone(batch))
		if len(got) != n {
			t.Fatalf("n %d: %d contributions back", n, len(got))
		}
		for i := range got {
			if got[i].VM != want[i].VM {
				t.Fatalf("n %d: at %d %q, want %q", n, i, got[i].VM, want[i].VM)
			}
		}
		// Every contribution once: the multiset of (VM, zones) kept.
		count := map[[2]any]int{}
		for _, c := range batch {
			count[[2]any{c.VM, len(c.Zones)}]++
		}
		for _, c := range got {
			count[[2]any{c.VM, len(c.Zones)}]--
		}
		for k, v := range count {
			if v != 0 {
				t.Fatalf("n %d: %v appears %d times more than given", n, k, -v)
			}
		}
	}
}
