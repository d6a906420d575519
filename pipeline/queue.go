package pipeline

import (
	"sync"

	"github.com/cnsd/cnsd/feed"
	"github.com/cnsd/cnsd/zonegen"
)

// event is one piece of work for Run, in arrival order.
type event struct {
	listing  *feed.VMListing
	staged   *staging // what the listing's pages prepared, or nil
	changed  *zonegen.VM
	gone     string
	servers  []string  // compute nodes whose state changed
	account  string    // an account that changed
	settings *Settings // new settings
	confirm  string    // the cause of a hold an operator confirmed
	tick     bool      // apply the self-removals due now
}

// queue hands events from the feeds to Run without blocking the feeds.
type queue struct {
	mu     sync.Mutex // guards events, busy
	events []event
	busy   bool // Run has taken events it has not finished
	kick   chan struct{}
}

func newQueue() queue { return queue{kick: make(chan struct{}, 1)} }

func (q *queue) push(e event) {
	q.mu.Lock()
	q.events = append(q.events, e)
	q.mu.Unlock()
	select {
	case q.kick <- struct{}{}:
	default:
	}
}

// take returns every queued event and marks the queue busy until done.
func (q *queue) take() []event {
	q.mu.Lock()
	defer q.mu.Unlock()
	out := q.events
	q.events = nil
	q.busy = len(out) > 0
	return out
}

func (q *queue) done() {
	q.mu.Lock()
	q.busy = false
	q.mu.Unlock()
}

func (q *queue) len() int {
	q.mu.Lock()
	defer q.mu.Unlock()
	return len(q.events)
}

func (q *queue) empty() bool {
	q.mu.Lock()
	defer q.mu.Unlock()
	return len(q.events) == 0 && !q.busy
}

// Listing replaces what is known about VMs with a complete listing (see
// feed.VMSink): VMs it does not list are removed, behind the
// mass-deletion guard. What its pages staged (ListingPage) goes with it.
func (p *Pipeline) Listing(l feed.VMListing) {
	p.queue.push(event{listing: &l, staged: p.stage.seal(len(l.VMs))})
}

// Changed applies one VM as it is now.
func (p *Pipeline) Changed(vm zonegen.VM) { p.queue.push(event{changed: &vm}) }

// Gone removes a VM that was destroyed or no longer exists.
func (p *Pipeline) Gone(uuid string) { p.queue.push(event{gone: uuid}) }

// ServersChanged re-evaluates the VMs on compute nodes whose state
// changed: the callback of feed.CNAPI.Run.
func (p *Pipeline) ServersChanged(servers []zonegen.Server) {
	uuids := make([]string, len(servers))
	for i, s := range servers {
		uuids[i] = s.UUID
	}
	p.stage.invalidate(nil, uuids, false)
	p.queue.push(event{servers: uuids})
}

// AccountChanged re-evaluates the VMs of an account: the callback of
// feed.UFDS.Watch.
func (p *Pipeline) AccountChanged(uuid string) {
	p.stage.invalidate([]string{uuid}, nil, false)
	p.queue.push(event{account: uuid})
}

// SetSettings applies new settings: every VM is evaluated again. A new
// hysteresis policy starts the damping afresh, with the members that are
// published now.
func (p *Pipeline) SetSettings(s Settings) {
	p.stage.invalidate(nil, nil, true)
	p.queue.push(event{settings: &s})
}
