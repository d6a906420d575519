package store

import (
	"os"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"testing"
	"time"
)

const mib = 1 << 20

func TestGCPercentFor(t *testing.T) {
	for _, c := range []struct {
		name string
		live uint64
		want int
	}{
		{"nothing live", 0, 100},
		{"small heap keeps the default", 10 * mib, 100},
		{"floor equals the live heap", 32 * mib, 100},
		{"floor is half the live heap", 64 * mib, 50},
		{"floor is a quarter", 128 * mib, 25},
		{"share above the floor", 150 * mib, 25},
		{"large heap", 4096 * mib, 25},
		{"between floor and share", 100 * mib, 32},
	} {
		t.Run(c.name, func(t *testing.T) {
			if got := gcPercentFor(c.live); got != c.want {
				t.Errorf("gcPercentFor(%d MiB) = %d, want %d", c.live/mib, got, c.want)
			}
		})
	}
}

func TestNextGCPercent(t *testing.T) {
	for _, c := range []struct {
		name    string
		percent int
		share   float64
		live    uint64
		want    int
	}{
		{"quiet halves", 100, 0.001, 512 * mib, 50},
		{"quiet stops at a quarter of the live heap", 50, 0, 512 * mib, 25},
		{"quiet stays at the least", 25, 0, 512 * mib, 25},
		{"quiet stops at the floor", 50, 0, 96 * mib, 33},
		{"busy doubles", 25, 0.05, 512 * mib, 50},
		{"busy stops at the default", 50, 0.5, 512 * mib, 100},
		{"in between holds", 50, 0.01, 512 * mib, 50},
		{"a heap grown small gets the default back", 25, 0.01, 16 * mib, 100},
	} {
		t.Run(c.name, func(t *testing.T) {
			if got := nextGCPercent(c.percent, c.share, c.live); got != c.want {
				t.Errorf("nextGCPercent(%d, %v, %d MiB) = %d, want %d", c.percent, c.share, c.live/mib, got, c.want)
			}
		})
	}
}

// TestHeadroomFollowsLiveHeap keeps a large live heap in a quiet
// process and steps the controller as its timer would: GOGC comes down
// to a quarter, a half at a time, then back to the default once the
// heap is small again.
//
// A step whose window saw collector work (the runtime.GC below, still
// being accounted; another test's leftovers; a machine loaded by other
// test processes, under -race) finds the collector busy and holds or
// doubles GOGC, as it should: the test asked three quiet steps in a row
// and failed so in CI twice. It now asks that GOGC reach a quarter within
// ten steps, each a halving, a hold or a doubling of the one before.
func TestHeadroomFollowsLiveHeap(t *testing.T) {
	withoutGOGC(t)
	// Live without being touched: the collector counts it whole, the
	// machine gives it pages only when written.
	ballast := make([]byte, 256<<20)
	runtime.GC()
	// A controller another test left running (a large build's release
	// starts one) may have lowered GOGC already: start from the default.
	StartAfresh()
	keepHeadroom()
	got := []uint64{100}
	for len(got) <= 10 && got[len(got)-1] != 25 {
		time.Sleep(100 * time.Millisecond)
		got = append(got, step())
	}
	for i := 1; i < len(got); i++ {
		if p, q := got[i-1], got[i]; q != p/2 && q != p && q != min(2*p, 100) {
			t.Errorf("GOGC went from %d to %d in one step (%v): a step halves, holds or doubles it", p, q, got)
		}
	}
	if got[len(got)-1] != 25 {
		t.Errorf("GOGC over ten steps with 256 MiB live = %v, want it down to 25", got)
	}
	runtime.KeepAlive(ballast)
	ballast = nil
	runtime.GC()
	if p := step(); p != 100 {
		t.Errorf("GOGC after the ballast went = %d, want 100 (a test binary's live heap is far under 32 MiB)", p)
	}
	stopHeadroom()
	if old := debug.SetGCPercent(100); old != 100 {
		t.Errorf("stopHeadroom left GOGC at %d", old)
	}
}

func TestHeadroomLeavesGOGCSetByTheOperator(t *testing.T) {
	t.Setenv("GOGC", "300")
	StartAfresh() // the Stores other tests opened started it
	for _, start := range []struct {
		name string
		f    func()
	}{{"bootHeadroom", bootHeadroom}, {"keepHeadroom", keepHeadroom}} {
		start.f()
		headroom.mu.Lock()
		running := headroom.timer != nil
		headroom.mu.Unlock()
		if running {
			stopHeadroom()
			t.Fatalf("%s started although GOGC is set", start.name)
		}
	}
}

// TestHeadroomAtStart opens Stores in a process whose environment does
// not set GOGC: the first Open gives the collector the start's headroom,
// kept while collections are busy, given up at the first quiet step,
// never taken again by a later Open, and ended by the first large
// build's release when that comes first.
func TestHeadroomAtStart(t *testing.T) {
	withoutGOGC(t)
	StartAfresh()
	open(t, NewMemory(), Options{})
	if p := gcPercent(); p != bootGCPercent {
		t.Fatalf("GOGC after the first Open = %d, want %d", p, bootGCPercent)
	}
	// Collections of a heap full of pointers, most of the step's time:
	// a busy start.
	ptrs := make([]*int, 4<<20)
	for i := range ptrs {
		ptrs[i] = new(int)
	}
	headroom.mu.Lock()
	headroom.gcCPU, headroom.allCPU, _, _ = readHeadroomSamples()
	headroom.mu.Unlock()
	for range 4 {
		runtime.GC()
	}
	if p := step(); p != bootGCPercent {
		t.Errorf("GOGC after a step of forced collections = %d, want the start's %d", p, bootGCPercent)
	}
	runtime.KeepAlive(ptrs)
	ptrs = nil
	runtime.GC()
	headroom.mu.Lock()
	headroom.gcCPU, headroom.allCPU, _, _ = readHeadroomSamples()
	headroom.mu.Unlock()
	time.Sleep(200 * time.Millisecond) // nothing collected: a quiet step
	if p := step(); p != 100 {
		t.Errorf("GOGC after a quiet step = %d, want 100 (a test binary's live heap is far under 32 MiB)", p)
	}
	open(t, NewMemory(), Options{})
	if p := gcPercent(); p != 100 {
		t.Errorf("GOGC after a second Open = %d, want 100: the start's headroom is taken once", p)
	}

	StartAfresh() // as a new process
	open(t, NewMemory(), Options{})
	if p := gcPercent(); p != bootGCPercent {
		t.Errorf("GOGC after StartAfresh and an Open = %d, want the start's %d again", p, bootGCPercent)
	}
	keepHeadroom() // a large build's release
	if p := gcPercent(); p != 100 {
		t.Errorf("GOGC after the release = %d, want 100", p)
	}
	headroom.mu.Lock()
	boot, running := headroom.boot, headroom.timer != nil
	headroom.mu.Unlock()
	if boot || !running {
		t.Errorf("after the release: start's headroom %v, controller running %v; want false, true", boot, running)
	}
}

// withoutGOGC unsets GOGC for the test (restored after it), so that the
// controller runs, and stops the controller when the test ends.
func withoutGOGC(t *testing.T) {
	t.Setenv("GOGC", "")
	if err := os.Unsetenv("GOGC"); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(stopHeadroom)
}

// gcPercent is the collector's GOGC percent now.
func gcPercent() uint64 {
	gogc := []metrics.Sample{{Name: "/gc/gogc:percent"}}
	metrics.Read(gogc)
	return gogc[0].Value.Uint64()
}

// step steps the controller as its timer would and returns GOGC after.
func step() uint64 {
	headroom.mu.Lock()
	stepHeadroomLocked()
	headroom.mu.Unlock()
	return gcPercent()
}
