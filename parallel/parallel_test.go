package parallel

import (
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// TestEachCallsEveryIndexOnce runs Each over worker counts below, at and
// above n (and the GOMAXPROCS default) and checks that every index is
// called exactly once and that no more calls than workers run at once.
func TestEachCallsEveryIndexOnce(t *testing.T) {
	for _, c := range []struct{ n, workers int }{
		{0, 0}, {1, 0}, {1, 4}, {7, 1}, {7, 3}, {100, 0}, {100, 2}, {5, 64},
	} {
		t.Run(fmt.Sprintf("n=%d,workers=%d", c.n, c.workers), func(t *testing.T) {
			calls := make([]atomic.Int32, c.n)
			var running, most atomic.Int32
			Each(c.n, c.workers, func(i int) {
				now := running.Add(1)
				for {
					m := most.Load()
					if now <= m || most.CompareAndSwap(m, now) {
						break
					}
				}
				time.Sleep(time.Millisecond) // let the others overlap
				calls[i].Add(1)
				running.Add(-1)
			})
			for i := range calls {
				if got := calls[i].Load(); got != 1 {
					t.Errorf("index %d called %d times", i, got)
				}
			}
			if limit := c.workers; limit >= 1 && int(most.Load()) > min(limit, c.n) {
				t.Errorf("%d calls at once, want at most %d", most.Load(), min(limit, c.n))
			}
		})
	}
}

// TestEachOneWorkerInOrder: with one worker the calls run in order on
// the caller's goroutine, so do may share state without a lock.
func TestEachOneWorkerInOrder(t *testing.T) {
	var got []int
	var mu sync.Mutex // only to make the race detector's point if Each broke the promise
	Each(5, 1, func(i int) {
		if !mu.TryLock() {
			t.Error("a second call ran while one was running")
			return
		}
		got = append(got, i)
		mu.Unlock()
	})
	if fmt.Sprint(got) != "[0 1 2 3 4]" {
		t.Errorf("calls in order %v, want [0 1 2 3 4]", got)
	}
}
