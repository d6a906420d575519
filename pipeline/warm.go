package pipeline

import (
	"context"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/cnsd/cnsd/feed"
	"github.com/cnsd/cnsd/zonegen"
)

// warmParallel is how many lookups of each kind warm has in flight.
const warmParallel = 4

// warmMin is the fewest VMs a pass warms its memo for: below it, the
// lookups in turn cost little.
const warmMin = 64

// warm looks up the owners and networks of vms into memo, warmParallel
// of each kind at a time, before the VMs are evaluated one after the
// other: a bootstrap would otherwise wait for a thousand accounts and a
// thousand networks in turn. What memo learns is what owner and network
// would have recorded; the first lookup of a kind that fails stops that
// kind's warming, so an outage costs one wait, as it does in turn (the
// owners left are then taken from the client's cache, ownersDown). What
// memo holds already (a listing's staging, stage.go) is not asked again,
// nor are owners once memo has them down.
func (r *resolver) warm(ctx context.Context, vms []*vmState, memo *lookups, networksDown bool) {
	var owners, networks []string
	seen := map[string]bool{}
	for _, st := range vms {
		wanted(&st.vm, seen, &owners, &networks)
	}
	owners = slices.DeleteFunc(owners, func(id string) bool { _, ok := memo.owners[id]; return ok || memo.ownersDown })
	networks = slices.DeleteFunc(networks, func(id string) bool { _, ok := memo.networks[id]; return ok || networksDown })
	r.prefetch(ctx, owners, networks, memo)
}

// wanted adds to owners and networks those of vm's that seen lacks, and
// notes them in seen.
func wanted(vm *zonegen.VM, seen map[string]bool, owners, networks *[]string) {
	if id := vm.OwnerUUID; id != "" && !seen[id] {
		seen[id] = true
		*owners = append(*owners, id)
	}
	for i := range vm.NICs {
		nic := &vm.NICs[i]
		// A NIC to repair learns its network from NAPI first; the
		// evaluation looks that one up itself.
		if id := nic.NetworkUUID; id != "" && !seen[id] && !zonegen.IsAdminNIC(nic) && !feed.NeedsRepair(nic) {
			seen[id] = true
			*networks = append(*networks, id)
		}
	}
}

// prefetch looks up owners and networks into memo, warmParallel of each
// kind at a time, until the first failure of each kind (warm); it
// reports false when a network lookup failed.
func (r *resolver) prefetch(ctx context.Context, owners, networks []string, memo *lookups) (networksOK bool) {
	var mu sync.Mutex // guards memo
	var wg sync.WaitGroup
	networksOK = true
	wg.Go(func() {
		warmEach(ctx, r.timeout, owners, func(ctx context.Context, id string) bool {
			acct, err := r.fetchOwner(ctx, id)
			mu.Lock()
			defer mu.Unlock()
			// Only the first failure is kept, as owner keeps it: with the
			// owners down, evaluation takes the rest from the cache.
			if err == nil || !memo.ownersDown {
				r.recordOwner(memo, id, acct, err)
			}
			return err == nil
		})
	})
	wg.Go(func() {
		warmEach(ctx, r.timeout, networks, func(ctx context.Context, id string) bool {
			net, err := r.fetchNetwork(ctx, id)
			mu.Lock()
			defer mu.Unlock()
			r.recordNetwork(memo, id, net, err)
			networksOK = networksOK && err == nil
			return err == nil
		})
	})
	wg.Wait()
	return networksOK
}

// warmEach calls look for each of ids over up to warmParallel
// goroutines, each call bounded as one VM's lookups are, until one
// reports a failure.
func warmEach(ctx context.Context, timeout time.Duration, ids []string, look func(context.Context, string) bool) {
	var next atomic.Int64
	var failed atomic.Bool
	var wg sync.WaitGroup
	for range min(warmParallel, len(ids)) {
		wg.Go(func() {
			for i := int(next.Add(1) - 1); i < len(ids) && !failed.Load() && ctx.Err() == nil; i = int(next.Add(1) - 1) {
				lctx, cancel := context.WithTimeout(ctx, timeout)
				ok := look(lctx, ids[i])
				cancel()
				if !ok {
					failed.Store(true)
				}
			}
		})
	}
	wg.Wait()
}
