package pipeline

import (
	"context"
	"strings"
	"sync"
	"time"

	"github.com/cnsd/cnsd/feed"
	"github.com/cnsd/cnsd/zonegen"
)

// A listing's pages arrive over seconds (100k VMs: about a hundred pages
// in 2.5 s), and until the last one nothing could be done: the lookups
// of a thousand owners and networks, then every VM's decision and
// records, all waited for the complete listing. The pipeline is a
// feed.VMPageSink: each page is handed to a worker that, while the rest
// is listed, looks up the page's owners and networks (as warm does, into
// the memo the listing's evaluation will use) and decides and generates
// the page's VMs speculatively. This staging commits nothing and changes
// none of the pipeline's state: applyListing, when it applies the
// complete listing in the queue's order, takes what was staged for it
// and uses an outcome only where it is exactly what evaluating the VM
// there would give; the rest it evaluates as before.
//
// What a staged outcome depends on, and how each is kept exact:
//   - the VM: the listing's VMs are its pages' (feed.VMPageSink), checked
//     by index and UUID;
//   - its owner: read into the memo (a VM whose owner the memo lacks,
//     as when UFDS is down and the client's cache would answer, is not
//     staged); an AccountChanged learnt before the listing is applied
//     marks the account dirty, and its VMs and memo entry are not used;
//   - its compute node: ServersChanged marks the node dirty, and the node
//     as CNAPI gives it at apply time must equal the one decided on, with
//     the same verdict (zonegen.ServerDown) at the apply time's now, the
//     only way now enters a decision;
//   - its networks: read once per listing into the memo, as warm does
//     (no feed reports a network change);
//   - the settings: SetSettings makes every outcome staged so far unused;
//   - the damping, which changes the tracker: never staged. applyListing
//     damps each staged decision in order, and generates again the few
//     whose records damping changed.
//
// A listing that fails (ListingAbandoned), or a new one starting (page
// 0), drops what was staged: only a complete Listing is applied.

// stager keeps the stagings of listings not yet applied: the one whose
// pages are arriving and those sealed by their Listing, waiting in the
// queue.
type stager struct {
	mu   sync.Mutex
	base context.Context // Run's, once it runs
	cur  *staging        // receiving pages; nil between listings
	// sealed are stagings whose Listing is queued: invalidations reach
	// them until applyListing takes them.
	sealed map[*staging]bool
}

// staging is what one listing's pages prepared.
type staging struct {
	ctx    context.Context
	cancel context.CancelFunc
	wake   chan struct{} // capacity 1: a page was queued or the pages ended
	done   chan struct{} // closed when the worker returns

	// Guarded by stager.mu.
	pages  []stagedPage // queued for the worker
	listed int          // VMs the pages delivered
	next   int          // number of the next page expected
	closed bool         // no page will come: sealed or dropped
	// dirty are the owners and compute nodes (lower case) that changed
	// after the staging began; stale: the settings changed.
	dirtyOwners, dirtyServers map[string]bool
	stale                     bool

	// The worker's until done is closed, then applyListing's.
	memo         *lookups
	networksDown bool            // a network prefetch failed
	asked        map[string]bool // owners and networks prefetched
	outcomes     []*staged       // by index in the listing; nil: evaluate it
	prepared     int             // pages prepared (guarded by stager.mu)
	skipped      int             // VMs of pages left unprepared (take)
	// reused and regenerated count the outcomes applyListing took, and
	// those of them it generated again after damping.
	reused, regenerated int
}

// stagedPage is one page of VMs and the index of its first in the
// listing.
type stagedPage struct {
	start int
	vms   []zonegen.VM
}

// staged is a speculative outcome: decided and generated at now, not
// damped.
type staged struct {
	o   Outcome
	now time.Time
}

var _ feed.VMPageSink = (*Pipeline)(nil)

// ListingPage stages page n of a listing under way (feed.VMPageSink):
// its lookups and evaluations start in the background. It never blocks.
func (p *Pipeline) ListingPage(n int, vms []zonegen.VM) {
	s := &p.stage
	s.mu.Lock()
	defer s.mu.Unlock()
	if n == 0 {
		s.dropLocked()
		s.cur = p.newStaging(s.base)
	}
	sg := s.cur
	if sg == nil {
		return // a page of a listing whose staging was dropped
	}
	if n != sg.next {
		// Pages out of order break the contract; the listing is then
		// evaluated as a whole.
		p.log.Warn("listing page out of order; the listing is evaluated once complete", "page", n, "want", sg.next)
		s.dropLocked()
		return
	}
	sg.pages = append(sg.pages, stagedPage{start: sg.listed, vms: vms})
	sg.listed += len(vms)
	sg.next++
	sg.kick()
}

// ListingAbandoned drops what the pages of a failed listing staged
// (feed.VMPageSink).
func (p *Pipeline) ListingAbandoned() {
	p.stage.mu.Lock()
	defer p.stage.mu.Unlock()
	p.stage.dropLocked()
}

// dropLocked drops the staging receiving pages; the caller holds mu.
func (s *stager) dropLocked() {
	if s.cur == nil {
		return
	}
	s.cur.closed = true
	s.cur.cancel()
	s.cur.kick()
	s.cur = nil
}

// seal ends the pages of the staging under way, for the Listing of n VMs
// that completes it, and returns it; nil when nothing was staged for
// such a listing.
func (s *stager) seal(n int) *staging {
	s.mu.Lock()
	defer s.mu.Unlock()
	sg := s.cur
	if sg == nil {
		return nil
	}
	s.cur = nil
	sg.closed = true
	sg.kick()
	if sg.listed != n {
		sg.cancel()
		return nil
	}
	if s.sealed == nil {
		s.sealed = map[*staging]bool{}
	}
	s.sealed[sg] = true
	return sg
}

// take waits for sg's worker to finish the page it is on and returns sg
// to applyListing, which owns it from then on; nil when ctx ended first.
// The pages the worker has not started are left to applyListing, which
// evaluates them with every core rather than wait for a worker that
// leaves the listing one.
func (s *stager) take(ctx context.Context, sg *staging) *staging {
	s.mu.Lock()
	for _, pg := range sg.pages {
		sg.skipped += len(pg.vms)
	}
	sg.pages = nil
	s.mu.Unlock()
	select {
	case <-sg.done:
	case <-ctx.Done():
		sg.cancel()
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.sealed, sg)
	if ctx.Err() != nil {
		return nil
	}
	return sg
}

// invalidate marks owners and compute nodes as changed, or everything
// (all), in every staging not yet applied.
func (s *stager) invalidate(owners, servers []string, all bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	mark := func(sg *staging) {
		for _, id := range owners {
			sg.dirtyOwners[strings.ToLower(id)] = true
		}
		for _, id := range servers {
			sg.dirtyServers[strings.ToLower(id)] = true
		}
		sg.stale = sg.stale || all
	}
	if s.cur != nil {
		mark(s.cur)
	}
	for sg := range s.sealed {
		mark(sg)
	}
}

// setBase makes ctx the context of the stagings begun from now on.
func (s *stager) setBase(ctx context.Context) {
	s.mu.Lock()
	s.base = ctx
	s.mu.Unlock()
}

func (sg *staging) kick() {
	select {
	case sg.wake <- struct{}{}:
	default:
	}
}

// newStaging starts the worker of a new staging.
func (p *Pipeline) newStaging(base context.Context) *staging {
	if base == nil {
		base = context.Background()
	}
	ctx, cancel := context.WithCancel(base)
	sg := &staging{ctx: ctx, cancel: cancel, wake: make(chan struct{}, 1), done: make(chan struct{}),
		dirtyOwners: map[string]bool{}, dirtyServers: map[string]bool{},
		memo: newLookups(), asked: map[string]bool{}}
	go p.stageWork(sg)
	return sg
}

// stageWork prepares sg's pages in order until they end.
func (p *Pipeline) stageWork(sg *staging) {
	defer close(sg.done)
	for {
		p.stage.mu.Lock()
		var pg stagedPage
		ok := len(sg.pages) > 0
		if ok {
			pg = sg.pages[0]
			sg.pages = sg.pages[1:]
		}
		closed := sg.closed
		p.stage.mu.Unlock()
		switch {
		case sg.ctx.Err() != nil:
			return
		case ok:
			p.preparePage(sg, pg)
		case closed:
			return
		default:
			select {
			case <-sg.wake:
			case <-sg.ctx.Done():
			}
		}
	}
}

// preparePage looks up what the VMs of pg need and evaluates those it
// can without asking anything more.
func (p *Pipeline) preparePage(sg *staging, pg stagedPage) {
	var owners, networks []string
	for i := range pg.vms {
		wanted(&pg.vms[i], sg.asked, &owners, &networks)
	}
	if sg.memo.ownersDown {
		owners = nil
	}
	if sg.networksDown {
		networks = nil
	}
	if !p.res.prefetch(sg.ctx, owners, networks, sg.memo) {
		sg.networksDown = true
	}
	p.stage.mu.Lock()
	stale := sg.stale
	p.stage.mu.Unlock()
	if stale || sg.ctx.Err() != nil {
		p.pagePrepared(sg)
		return
	}
	p.mu.Lock()
	opts, gen := p.settings.Decide, p.gen
	p.mu.Unlock()
	now := p.cfg.Clock()
	outs := make([]Outcome, 0, len(pg.vms))
	idx := make([]int, 0, len(pg.vms))
	for i := range pg.vms {
		if !sg.ready(&pg.vms[i]) {
			continue
		}
		outs = append(outs, p.res.decide(sg.ctx, pg.vms[i], opts, now, sg.memo, nil))
		idx = append(idx, pg.start+i)
	}
	// One goroutine: the listing, which the bootstrap waits for, keeps
	// the other cores.
	for i := range outs {
		generate(gen, &outs[i])
	}
	p.stage.mu.Lock()
	defer p.stage.mu.Unlock()
	sg.prepared++
	if sg.stale || sg.ctx.Err() != nil {
		return
	}
	if len(sg.outcomes) < pg.start+len(pg.vms) {
		sg.outcomes = append(sg.outcomes, make([]*staged, pg.start+len(pg.vms)-len(sg.outcomes))...)
	}
	for j := range outs {
		vm := &outs[j].View.VM
		if sg.dirtyOwners[strings.ToLower(vm.OwnerUUID)] || sg.dirtyServers[strings.ToLower(vm.ServerUUID)] {
			continue
		}
		sg.outcomes[idx[j]] = &staged{o: outs[j], now: now}
	}
}

func (p *Pipeline) pagePrepared(sg *staging) {
	p.stage.mu.Lock()
	sg.prepared++
	p.stage.mu.Unlock()
}

// ready reports whether vm can be decided from the memo alone: its
// owner and networks are in it, and no NIC needs repairing from NAPI.
// An owner the memo lacks (the owners are down, and the client's cache
// would answer) is left to applyListing, which reads that cache as it is
// then.
func (sg *staging) ready(vm *zonegen.VM) bool {
	if _, ok := sg.memo.owners[vm.OwnerUUID]; !ok {
		return false
	}
	for i := range vm.NICs {
		nic := &vm.NICs[i]
		if zonegen.IsAdminNIC(nic) {
			continue
		}
		if feed.NeedsRepair(nic) {
			return false
		}
		if nic.NetworkUUID == "" {
			continue
		}
		if _, ok := sg.memo.networks[nic.NetworkUUID]; !ok {
			return false
		}
	}
	return true
}

// forApply readies a taken staging for the listing's evaluation: the
// memo forgets the owners that changed. It returns the memo.
func (sg *staging) forApply(s *stager) *lookups {
	s.mu.Lock()
	defer s.mu.Unlock()
	for id := range sg.memo.owners {
		if sg.dirtyOwners[strings.ToLower(id)] {
			delete(sg.memo.owners, id)
		}
	}
	return sg.memo
}

// stagedOutcome returns the staged outcome of vm, index i of the listing, if
// it is exactly what deciding it now, before damping, gives; the caller
// is applyListing, after take.
func (p *Pipeline) stagedOutcome(sg *staging, i int, vm *zonegen.VM, now time.Time) *staged {
	if sg == nil || sg.stale || i >= len(sg.outcomes) || sg.outcomes[i] == nil {
		return nil
	}
	sp := sg.outcomes[i]
	sg.outcomes[i] = nil
	if sp.o.View.VM.UUID != vm.UUID || sg.dirtyOwners[strings.ToLower(vm.OwnerUUID)] ||
		sg.dirtyServers[strings.ToLower(vm.ServerUUID)] {
		return nil
	}
	if vm.ServerUUID != "" {
		s, ok := p.res.servers.Server(vm.ServerUUID)
		was := sp.o.View.Server
		if ok != (was != nil) || ok && s != *was {
			return nil
		}
		if ok {
			opts := p.settings.Decide
			d1, why1 := zonegen.ServerDown(&s, opts, sp.now)
			d2, why2 := zonegen.ServerDown(&s, opts, now)
			if d1 != d2 || why1 != why2 {
				return nil
			}
		}
	}
	return sp
}
