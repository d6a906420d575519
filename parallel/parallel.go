// Package parallel runs the independent pieces of one bulk step over the
// machine's cores: a listing page's VMs decoded, a listing's records
// generated, a bootstrap's zones built and encoded for a backend, each
// of which would otherwise keep one core busy and leave the other idle.
package parallel

import (
	"runtime"
	"sync"
	"sync/atomic"
)

// Each calls do(0), …, do(n-1), each once, over up to workers goroutines
// (GOMAXPROCS when workers < 1; never more than n), each taking the next
// index when it is done with one, so that unequal pieces even out; it
// returns when every call has returned. The calls run concurrently: do
// must be safe for that, writing only what index i owns. With one worker
// the calls run in order on the caller's goroutine.
func Each(n, workers int, do func(i int)) {
	if workers < 1 {
		workers = runtime.GOMAXPROCS(0)
	}
	workers = min(workers, n)
	if workers <= 1 {
		for i := range n {
			do(i)
		}
		return
	}
	var next atomic.Int64
	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() {
			for i := int(next.Add(1) - 1); i < n; i = int(next.Add(1) - 1) {
				do(i)
			}
		})
	}
	wg.Wait()
}
