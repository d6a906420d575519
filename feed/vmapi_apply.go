package feed

import (
	"context"
	"errors"

	"github.com/cnsd/cnsd/zonegen"
)

// fetchAttempts bounds the tries of one GET /vms/{uuid} that fails with a
// transport error or a 5xx; after that the change is skipped (the next
// change of the VM, or the next listing, brings it back).
const fetchAttempts = 4

// work fetches each queued VM and hands it to the sink, until ctx ends.
func (v *VMAPI) work(ctx context.Context, q *changeQueue, sink VMSink) error {
	for {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-q.ready:
		}
		for uuid, ok := q.pop(); ok; uuid, ok = q.pop() {
			v.apply(ctx, uuid, sink)
			if ctx.Err() != nil {
				return ctx.Err()
			}
		}
	}
}

// apply fetches one changed VM and tells the sink what became of it.
func (v *VMAPI) apply(ctx context.Context, uuid string, sink VMSink) {
	vm, err := v.fetch(ctx, uuid)
	switch {
	case errors.Is(err, errVMGone):
		sink.Gone(uuid)
	case err != nil:
		if ctx.Err() == nil {
			v.log.Error("vm change skipped", "vm", uuid, "err", err)
		}
	case vm.State == "destroyed" || bool(vm.Destroyed):
		sink.Gone(uuid)
	default:
		sink.Changed(vm)
	}
}

// fetch gets one VM, trying again after transport errors and 5xx answers.
func (v *VMAPI) fetch(ctx context.Context, uuid string) (vm zonegen.VM, err error) {
	for n := range fetchAttempts {
		vm, err = v.getVM(ctx, uuid)
		if err == nil || !retryable(err) || n == fetchAttempts-1 {
			return vm, err
		}
		v.log.Warn("vm fetch failed; trying again", "vm", uuid, "attempt", n+1, "err", err)
		if !sleep(ctx, v.backoff(n)) {
			return vm, ctx.Err()
		}
	}
	return vm, err
}
