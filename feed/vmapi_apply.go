package feed

import (
	"context"
	"errors"
	"sync"
	"time"
)

// A GET /vms/{uuid} that fails with a transport error, a body cut short
// or a 5xx is tried again after a back-off (MinBackoff doubling up to
// MaxBackoff) for as long as it fails: a change dropped after a few tries
// would leave the VM's records stale until its next change or listing,
// which may be days. While several VMs are failing, a failure is logged
// when it is the 1st, 2nd, 4th, 8th, … failure since the last fetch that
// succeeded; while one VM alone is, at its tries 1, 2, 4, …: a VMAPI
// outage with many changed VMs logs a few lines, not one per VM, and a
// single VM VMAPI cannot serve logs a few minutes apart. A fetch that
// was asked before the success that ended an outage and fails after it
// belonged to that outage: it is tried again but neither logged nor
// counted as the start of another.

// changeWorker fetches queued VMs and hands them to the sink. A failed
// fetch is queued again after a back-off rather than waited for, so that
// one VM VMAPI cannot serve does not hold up the changes of the others.
type changeWorker struct {
	v *VMAPI
	q *changeQueue

	sinkMu sync.Mutex // serializes the calls of sink
	sink   VMSink

	mu    sync.Mutex     // guards tries and failing
	tries map[string]int // uuid → failed fetches so far
	// failing counts the failed fetches since the last one that
	// succeeded; recovered is when that one succeeded.
	failing   int
	recovered time.Time
	// once: a failed fetch is not queued again (verifyNow asks again
	// before the next listing).
	once bool
}

// work runs Fetchers fetching goroutines until ctx ends.
func (v *VMAPI) work(ctx context.Context, q *changeQueue, sink VMSink) error {
	w := &changeWorker{v: v, q: q, sink: sink, tries: map[string]int{}}
	var wg sync.WaitGroup
	for range v.cfg.Fetchers {
		wg.Go(func() { w.run(ctx) })
	}
	wg.Wait()
	return ctx.Err()
}

func (w *changeWorker) run(ctx context.Context) {
	for {
		select {
		case <-ctx.Done():
			return
		case <-w.q.ready:
		}
		for uuid, ok := w.q.pop(); ok; uuid, ok = w.q.pop() {
			w.apply(ctx, uuid)
			w.q.done(uuid)
			if ctx.Err() != nil {
				return
			}
		}
	}
}

// apply fetches one changed VM and tells the sink what became of it.
func (w *changeWorker) apply(ctx context.Context, uuid string) {
	asked := time.Now()
	vm, err := w.v.getVM(ctx, uuid)
	if err != nil && ctx.Err() != nil {
		return
	}
	if err != nil && vmapiRetryable(err) {
		w.retry(ctx, uuid, asked, err)
		return
	}
	w.mu.Lock()
	delete(w.tries, uuid)
	if failed := w.failing; failed > 0 && err == nil {
		w.failing, w.recovered = 0, time.Now()
		w.v.log.Info("vm fetches succeed again", "failures", failed, "vms_waiting", len(w.tries))
	}
	w.mu.Unlock()
	w.v.verified(uuid)
	w.sinkMu.Lock()
	defer w.sinkMu.Unlock()
	switch {
	case errors.Is(err, errVMGone):
		w.sink.Gone(uuid)
	case err != nil:
		w.v.log.Error("vm change skipped", "vm", uuid, "err", err)
	case vm.State == "destroyed" || bool(vm.Destroyed):
		w.sink.Gone(uuid)
	default:
		w.sink.Changed(vm)
	}
}

// retry queues uuid again after a back-off; its fetch was asked at
// asked.
func (w *changeWorker) retry(ctx context.Context, uuid string, asked time.Time, err error) {
	w.mu.Lock()
	n := w.tries[uuid]
	w.tries[uuid] = n + 1
	late := asked.Before(w.recovered) // of the outage that ended
	if !late {
		w.failing++
	}
	try, failing, waiting := n+1, w.failing, len(w.tries)
	w.mu.Unlock()
	if w.once {
		w.v.log.Warn("vm fetch failed; asking again before the next listing", "vm", uuid, "err", err)
		return
	}
	if !late && (waiting == 1 && powerOfTwo(try) || waiting > 1 && powerOfTwo(failing)) {
		w.v.log.Warn("vm fetch failed; trying again", "vm", uuid, "attempt", try,
			"failures", failing, "vms_waiting", waiting, "err", err)
	}
	time.AfterFunc(w.v.backoff(n), func() {
		if ctx.Err() == nil {
			w.q.push(uuid)
		}
	})
}

func powerOfTwo(n int) bool { return n > 0 && n&(n-1) == 0 }
