package feed

import (
	"context"
	"errors"
	"time"
)

// vmFetchAttempts bounds the tries of one GET /vms/{uuid} that fails with a
// transport error or a 5xx; after that the change is skipped (the next
// change of the VM, or the next listing, brings it back).
const vmFetchAttempts = 4

// changeWorker fetches queued VMs and hands them to the sink. A failed fetch is
// queued again after a back-off rather than waited for, so that one VM
// VMAPI cannot serve does not hold up the changes of all the others.
type changeWorker struct {
	v     *VMAPI
	q     *changeQueue
	sink  VMSink
	tries map[string]int // uuid → failed fetches so far; only the worker goroutine touches it
}

// work fetches each queued VM and hands it to the sink, until ctx ends.
func (v *VMAPI) work(ctx context.Context, q *changeQueue, sink VMSink) error {
	w := &changeWorker{v: v, q: q, sink: sink, tries: map[string]int{}}
	for {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-q.ready:
		}
		for uuid, ok := q.pop(); ok; uuid, ok = q.pop() {
			w.apply(ctx, uuid)
			if ctx.Err() != nil {
				return ctx.Err()
			}
		}
	}
}

// apply fetches one changed VM and tells the sink what became of it.
func (w *changeWorker) apply(ctx context.Context, uuid string) {
	vm, err := w.v.getVM(ctx, uuid)
	if err != nil && ctx.Err() != nil {
		return
	}
	if err != nil && !errors.Is(err, errVMGone) && vmapiRetryable(err) && w.tries[uuid] < vmFetchAttempts-1 {
		n := w.tries[uuid]
		w.tries[uuid]++
		w.v.log.Warn("vm fetch failed; trying again", "vm", uuid, "attempt", n+1, "err", err)
		time.AfterFunc(w.v.backoff(n), func() {
			if ctx.Err() == nil {
				w.q.push(uuid)
			}
		})
		return
	}
	delete(w.tries, uuid)
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
