package pipeline

import (
	"slices"
	"strings"
	"time"

	"github.com/cnsd/cnsd/zonegen"
)

// VMStatus explains one VM: the decision and its reasons, the names that
// were skipped, and its self-removals still pending.
type VMStatus struct {
	VM        zonegen.VM       `json:"vm"`
	Decision  zonegen.Decision `json:"decision"`
	Notes     []zonegen.Reason `json:"notes,omitempty"`
	Evaluated time.Time        `json:"evaluated"`
	Pending   []PendingRemoval `json:"pending,omitempty"`
	Held      []string         `json:"held,omitempty"` // causes of holds its records wait in
	Retrying  bool             `json:"retrying,omitempty"`
}

// PendingRemoval is a self-removal that has not taken effect yet.
type PendingRemoval struct {
	Service   string    `json:"service"` // owner uuid/service name
	VM        string    `json:"vm"`
	Requested time.Time `json:"requested"`
	Due       time.Time `json:"due"` // an estimate: later reports change it
}

// VM returns what the pipeline knows of the VM uuid, and false if it knows
// nothing.
func (p *Pipeline) VM(uuid string) (VMStatus, bool) {
	uuid = strings.ToLower(uuid)
	p.mu.Lock()
	defer p.mu.Unlock()
	st := p.vms[uuid]
	if st == nil {
		return VMStatus{}, false
	}
	out := VMStatus{VM: st.vm, Decision: st.decision, Notes: st.notes, Evaluated: st.evaluated, Retrying: p.retry[uuid]}
	for _, r := range p.pendingLocked() {
		if r.VM == uuid {
			out.Pending = append(out.Pending, r)
		}
	}
	for cause, h := range p.holds {
		if _, ok := h.held[uuid]; ok {
			out.Held = append(out.Held, cause)
		}
	}
	slices.Sort(out.Held)
	return out, true
}

// Pending lists the self-removals not yet in effect, soonest first.
func (p *Pipeline) Pending() []PendingRemoval {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.pendingLocked()
}

func (p *Pipeline) pendingLocked() []PendingRemoval {
	var out []PendingRemoval
	for _, r := range p.tracker.Pending(p.cfg.Clock()) {
		out = append(out, PendingRemoval{Service: r.Service, VM: r.Member, Requested: r.Requested, Due: r.Due})
	}
	return out
}

// Stats are the pipeline's figures for the metrics.
type Stats struct {
	VMs        int // VMs known
	Unresolved int // VMs waiting for a lookup
	Queued     int // changes received and not applied yet
	// PendingSources are the sources whose contributions wait to be
	// committed (store.Batcher.Pending): one per VM however many
	// changes it had, so the count stays bounded during a store outage.
	PendingSources int
	Listings       int64     // complete listings applied
	Commits        int64     // commits to the store
	LastChange     time.Time // when a change or listing was last applied
}

// Stats returns the pipeline's figures now.
func (p *Pipeline) Stats() Stats {
	queued := p.queue.len()
	p.mu.Lock()
	defer p.mu.Unlock()
	return Stats{VMs: len(p.vms), Unresolved: len(p.retry), Queued: queued, Listings: p.listings,
		Commits: p.out.Commits(), LastChange: p.lastChange, PendingSources: p.out.Pending()}
}
