package pipeline

import (
	"context"
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
// owners left are then taken from the client's cache, ownersDown).
func (r *resolver) warm(ctx context.Context, vms []*vmState, memo *lookups) {
	var owners, networks []string
	seen := map[string]bool{}
	for _, st := range vms {
		if id := st.vm.OwnerUUID; id != "" && !seen[id] {
			seen[id] = true
			owners = append(owners, id)
		}
		for i := range st.vm.NICs {
			nic := &st.vm.NICs[i]
			// A NIC to repair learns its network from NAPI first; the
			// evaluation looks that one up itself.
			if id := nic.NetworkUUID; id != "" && !seen[id] && !zonegen.IsAdminNIC(nic) && !feed.NeedsRepair(nic) {
				seen[id] = true
				networks = append(networks, id)
			}
		}
	}
	var mu sync.Mutex // guards memo
	var wg sync.WaitGroup
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
			return err == nil
		})
	})
	wg.Wait()
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
