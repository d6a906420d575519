package pipeline

import (
	"context"
	"runtime"
	"time"

	"github.com/cnsd/cnsd/feed"
	"github.com/cnsd/cnsd/hysteresis"
	"github.com/cnsd/cnsd/parallel"
	"github.com/cnsd/cnsd/zonegen"
)

// loop is Run's worker: the one goroutine that changes the pipeline.
func (p *Pipeline) loop(ctx context.Context) error {
	retry := time.NewTicker(p.cfg.RetryInterval)
	defer retry.Stop()
	due := time.NewTimer(time.Hour)
	defer due.Stop()
	for {
		p.arm(due)
		select {
		case <-ctx.Done():
			return nil
		case <-p.queue.kick:
			for _, e := range p.queue.take() {
				p.apply(ctx, e)
				p.noteApplied(e)
			}
			p.queue.done()
		case <-due.C:
			p.advance(ctx)
		case <-retry.C:
			p.retryUnresolved(ctx)
		}
		p.reportUnresolved()
	}
}

// reportUnresolved logs when the number of VMs waiting for a lookup
// changes, with one of them as an example, so an outage is one line, not
// one per VM, and its end is visible.
func (p *Pipeline) reportUnresolved() {
	p.mu.Lock()
	defer p.mu.Unlock()
	n := len(p.retry)
	if n == p.lastUnresolved {
		return
	}
	p.lastUnresolved = n
	if n == 0 {
		p.log.Info("every VM resolved")
		return
	}
	for uuid := range p.retry {
		var why []zonegen.Reason
		if st := p.vms[uuid]; st != nil {
			why = st.decision.Reasons
		}
		p.log.Warn("VMs unresolved: a lookup failed, they keep their records and are retried",
			"vms", n, "example", uuid, "reasons", why)
		return
	}
}

// noteApplied counts what the metrics report of a change applied.
func (p *Pipeline) noteApplied(e event) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if e.listing != nil {
		p.listings++
	}
	if e.listing != nil || e.changed != nil || e.gone != "" {
		p.lastChange = time.Now()
	}
}

// arm sets the timer for the next self-removal that falls due.
func (p *Pipeline) arm(t *time.Timer) {
	now := p.cfg.Clock()
	next, ok := p.tracker.NextDue(now)
	if !ok {
		t.Stop()
		return
	}
	t.Reset(max(next.Sub(now), 0))
}

func (p *Pipeline) apply(ctx context.Context, e event) {
	switch {
	case e.listing != nil:
		p.applyListing(ctx, *e.listing, e.staged)
	case e.changed != nil:
		p.applyChanged(ctx, *e.changed)
	case e.gone != "":
		p.applyGone(e.gone)
	case e.servers != nil:
		p.applyServers(ctx, e.servers)
	case e.account != "":
		p.applyAccount(ctx, e.account)
	case e.settings != nil:
		p.applySettings(ctx, *e.settings)
	case e.confirm != "":
		p.mu.Lock()
		p.confirm(e.confirm)
		p.mu.Unlock()
	case e.tick:
		p.advance(ctx)
	}
}

func (p *Pipeline) applyChanged(ctx context.Context, vm zonegen.VM) {
	p.mu.Lock()
	st := p.put(vm)
	p.mu.Unlock()
	now := p.cfg.Clock()
	c, ok := p.evaluate(ctx, st, now, newLookups())
	if !ok {
		return
	}
	p.mu.Lock()
	p.release(vm.UUID, now)
	p.mu.Unlock()
	p.out.Add(c)
}

func (p *Pipeline) applyGone(uuid string) {
	now := p.cfg.Clock()
	p.mu.Lock()
	p.drop(uuid, now)
	p.release(uuid, now)
	p.mu.Unlock()
	p.out.Add(zonegen.Contribution{VM: uuid})
}

// applyServers evaluates the VMs of compute nodes whose state changed and
// updates the nodes' own CMON names, behind the mass-deletion guard: a
// CNAPI that reports every node down or gone is more often broken than
// right.
func (p *Pipeline) applyServers(ctx context.Context, servers []string) {
	now := p.cfg.Clock()
	cs := p.evaluateAll(ctx, p.vmsOf(p.byServer, servers), now, "", nil)
	if ctx.Err() != nil {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	cs = append(cs, p.computeNodes(servers)...)
	p.reportServers(servers, p.recordChanges(cs))
	p.guard(now, CauseComputeNodes, cs, false)
}

// reevaluate evaluates VMs again and sends their records to the store,
// or to the hold that keeps them (submit).
func (p *Pipeline) reevaluate(ctx context.Context, vms []*vmState) {
	now := p.cfg.Clock()
	cs := p.evaluateAll(ctx, vms, now, "", nil)
	p.mu.Lock()
	p.submit(now, cs)
	p.mu.Unlock()
}

// evaluateAll evaluates vms at now with one lookup memo and returns the
// contributions of those that resolved. A non-empty what logs progress.
//
// The owners and networks of many VMs are looked up first, several at a
// time (warm). The VMs are decided one after the other, in order, as
// evaluate would, but their records are generated in batches over
// GOMAXPROCS goroutines: generating is most of an evaluation's CPU, and
// a bootstrap waits for 100k of them after its listing. Batches bound
// how many views are held at once.
//
// sg, for a listing whose VMs vms are, in order, is what its pages
// staged: its memo is the pass's, and a VM with a staged outcome still
// exact (stagedOutcome) is only damped, not decided again, nor generated
// again unless the damping changed its decision.
func (p *Pipeline) evaluateAll(ctx context.Context, vms []*vmState, now time.Time, what string, sg *staging) []zonegen.Contribution {
	memo, networksDown := newLookups(), false
	if sg != nil {
		memo, networksDown = sg.forApply(&p.stage), sg.networksDown
	}
	if len(vms) >= warmMin {
		p.res.warm(ctx, vms, memo, networksDown)
	}
	prog := newProgress(p, what, len(vms))
	cs := make([]zonegen.Contribution, 0, len(vms))
	outs := make([]Outcome, 0, min(len(vms), evaluateBatch))
	fresh := make([]bool, 0, min(len(vms), evaluateBatch))
	for start := 0; start < len(vms) && ctx.Err() == nil; start += evaluateBatch {
		batch := vms[start:min(start+evaluateBatch, len(vms))]
		outs, fresh = outs[:0], fresh[:0]
		for i, st := range batch {
			if ctx.Err() != nil {
				break
			}
			if sp := p.stagedOutcome(sg, start+i, &st.vm, now); sp != nil {
				o, regen := sp.o, false
				if !o.Decision.Unresolved {
					p.mu.Lock()
					regen = p.damp(now, st, &o.Decision)
					p.mu.Unlock()
				}
				if regen {
					o.Contribution = zonegen.Contribution{VM: o.View.VM.UUID}
					sg.regenerated++
				}
				sg.reused++
				outs, fresh = append(outs, o), append(fresh, regen)
			} else {
				outs, fresh = append(outs, p.decide(ctx, st, now, memo)), append(fresh, true)
			}
			prog.step(start + i + 1)
		}
		generateAll(p.gen, outs, fresh)
		for i := range outs {
			if c, ok := p.record(ctx, batch[i], now, &outs[i]); ok {
				cs = append(cs, c)
			}
		}
	}
	prog.end(len(cs))
	return cs
}

// evaluateBatch is how many VMs evaluateAll decides before generating
// their records: enough to keep every core busy for a while, few enough
// that their views take little memory.
const evaluateBatch = 1024

// generateAll generates the records of the outcomes of outs whose which
// is true (all when which is nil) over up to GOMAXPROCS goroutines
// (Generator is safe for concurrent use); the others keep the records
// they have.
func generateAll(gen *zonegen.Generator, outs []Outcome, which []bool) {
	todo := len(outs)
	if which != nil {
		todo = 0
		for _, w := range which {
			if w {
				todo++
			}
		}
	}
	if todo == 0 {
		return
	}
	parallel.Each(len(outs), min(runtime.GOMAXPROCS(0), max(todo/64, 1)), func(i int) {
		if which == nil || which[i] {
			generate(gen, &outs[i])
		}
	})
}

// vmsOf returns the VMs that x lists under any of keys.
func (p *Pipeline) vmsOf(x index, keys []string) []*vmState {
	var out []*vmState
	for _, k := range keys {
		for uuid := range x[k] {
			out = append(out, p.vms[uuid])
		}
	}
	return out
}

// advance applies the self-removals that fell due and evaluates their
// VMs again.
func (p *Pipeline) advance(ctx context.Context) {
	now := p.cfg.Clock()
	p.mu.Lock()
	removals := p.tracker.Advance(now)
	var vms []*vmState
	seen := map[string]bool{}
	for _, r := range removals {
		if st := p.vms[r.Member]; st != nil && !seen[r.Member] {
			seen[r.Member] = true
			vms = append(vms, st)
			p.log.Info("self-removal took effect", "service", r.Service, "vm", r.Member,
				"requested", r.Requested, "waited", r.At.Sub(r.Requested))
		}
	}
	p.mu.Unlock()
	p.reevaluate(ctx, vms)
}

// retryUnresolved evaluates again the VMs whose lookups failed.
func (p *Pipeline) retryUnresolved(ctx context.Context) {
	p.mu.Lock()
	vms := make([]*vmState, 0, len(p.retry))
	for uuid := range p.retry {
		if st := p.vms[uuid]; st != nil {
			vms = append(vms, st)
		}
	}
	p.mu.Unlock()
	if len(vms) > 0 {
		p.reevaluate(ctx, vms)
	}
}

// applySettings switches to new settings and evaluates every VM again.
func (p *Pipeline) applySettings(ctx context.Context, s Settings) {
	s = withDefaults(s)
	p.mu.Lock()
	if s.Hysteresis != p.settings.Hysteresis {
		p.tracker = hysteresis.New(s.Hysteresis)
		for _, st := range p.vms {
			st.services = nil
		}
	}
	p.settings, p.gen = s, zonegen.NewGenerator(s.Naming)
	vms := make([]*vmState, 0, len(p.vms))
	for _, st := range p.vms {
		vms = append(vms, st)
	}
	p.submit(p.cfg.Clock(), p.allComputeNodes())
	p.mu.Unlock()
	p.reevaluate(ctx, vms)
}

// applyListing makes a complete listing the truth: listed VMs are
// evaluated, VMs it leaves out are removed, and the whole change goes
// through the mass-deletion guard. sg is what the listing's pages staged
// (stage.go), or nil.
func (p *Pipeline) applyListing(ctx context.Context, l feed.VMListing, sg *staging) {
	now := p.cfg.Clock()
	present := make(map[string]bool, len(l.VMs)+len(l.Unreadable))
	for _, uuid := range l.Unreadable {
		present[uuid] = true
	}
	var vms []*vmState
	p.mu.Lock()
	first := len(p.vms) == 0
	if first {
		vms = p.putFirst(l.VMs, present)
	} else {
		vms = make([]*vmState, 0, len(l.VMs))
		for _, vm := range l.VMs {
			present[vm.UUID] = true
			vms = append(vms, p.put(vm))
		}
	}
	p.mu.Unlock()
	if first && len(l.VMs) >= collectAfterListing {
		// A bootstrap's heap is collected now, while this goroutine
		// evaluates the listing on one core and the other is idle: the
		// listing's pages are garbage, and the collection the commit's
		// allocations would set off otherwise marks the same heap while
		// both cores build and write the zones, slowing them with
		// assists and write barriers (docs/BENCHMARKS.md, "Issue 18:
		// the bootstrap's collection moved before the commit").
		go collect()
	}
	if sg != nil {
		sg = p.stage.take(ctx, sg)
	}
	cs := p.evaluateAll(ctx, vms, now, "listing", sg)
	if ctx.Err() != nil {
		return
	}
	if sg != nil {
		p.log.Info("listing staged while it was listed", "vms", len(vms), "reused", sg.reused,
			"damped_again", sg.regenerated, "left_to_evaluate", sg.skipped)
		p.mu.Lock()
		p.lastReused = sg.reused
		p.mu.Unlock()
	}
	p.mu.Lock()
	gone := p.absent(present, first)
	for _, uuid := range gone {
		p.drop(uuid, now)
		cs = append(cs, zonegen.Contribution{VM: uuid})
	}
	p.guard(now, CauseRelist, cs, true)
	ask := p.toVerify(gone)
	p.mu.Unlock()
	if len(ask) > 0 {
		p.cfg.Verify(ask)
	}
}

// toVerify returns the VMs of gone, the VMs a listing left out, that the
// re-list hold keeps. Config.Verify asks VMAPI about each: a listing
// that leaves out VMs VMAPI still has (the failure the guard is for) is
// then corrected VM by VM, and VMs really gone are removed without an
// operator, each on VMAPI's own word (GET /vms/:uuid: destroyed or
// unknown), as a change item about them would. They are marked in the
// hold: their removal waits for that answer even after what is left of
// the hold no longer deletes en masse. The caller holds mu.
func (p *Pipeline) toVerify(gone []string) []string {
	h := p.holds[CauseRelist]
	if p.cfg.Verify == nil || h == nil {
		return nil
	}
	var ask []string
	for _, uuid := range gone {
		if _, held := h.held[uuid]; held {
			ask = append(ask, uuid)
			if h.unverified == nil {
				h.unverified = map[string]bool{}
			}
			h.unverified[uuid] = true
		}
	}
	return ask
}

// collectAfterListing is the fewest VMs of a first listing after which
// applyListing collects the heap; tests lower it.
var collectAfterListing = 10_000

// collect collects the heap; tests count its calls.
var collect = runtime.GC

// absent lists the VMs known here or in the store that present lacks;
// sources that are not VM UUIDs (compute nodes, the catalog zone) are
// never absent from a VM listing. The caller holds mu. first says that the
// listing was the first and put every VM here (putFirst), none of which
// can be absent: the 100k of a bootstrap are not walked again, on the
// one goroutine between the listing and the commit.
func (p *Pipeline) absent(present map[string]bool, first bool) []string {
	var out []string
	seen := map[string]bool{}
	if !first {
		for uuid := range p.vms {
			if !present[uuid] {
				out, seen[uuid] = append(out, uuid), true
			}
		}
	}
	for _, uuid := range p.cfg.Store.Sources() {
		if isUUID(uuid) && !present[uuid] && !seen[uuid] {
			out = append(out, uuid)
		}
	}
	return out
}

// Tick applies the self-removals due at the pipeline's clock now: for
// tests that drive the clock; Run arms a timer for them otherwise.
func (p *Pipeline) Tick() { p.queue.push(event{tick: true}) }
