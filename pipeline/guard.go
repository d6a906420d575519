package pipeline

import (
	"errors"
	"fmt"
	"iter"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/cnsd/cnsd/zonegen"
)

// The causes of bulk changes the mass-deletion guard watches.
const (
	CauseRelist       = "re-list"       // VMs a complete listing left out or changed
	CauseComputeNodes = "compute-nodes" // VMs and CMON names of compute nodes whose state changed
)

// ErrNoHold is returned by Confirm when nothing is held for the cause.
var ErrNoHold = errors.New("no mass deletion is held")

// Hold is a mass deletion waiting for an operator or for its condition to
// clear.
type Hold struct {
	Cause string    `json:"cause"`
	Since time.Time `json:"since"`
	// VMs are the sources whose new records wait, sorted: VM UUIDs, and
	// compute nodes (their CMON names) as cn:<uuid>.
	VMs []string `json:"vms"`
	// Zones are the zones the held change would remove too much of.
	Zones []HeldZone `json:"zones"`
}

// HeldZone is one zone a held change would shrink.
type HeldZone struct {
	Zone    string `json:"zone"`
	Removed int    `json:"removed"` // records the held change removes
	Records int    `json:"records"` // records the zone has now
}

// hold is the guard's state for one cause.
type hold struct {
	cause string
	since time.Time
	// held are the contributions waiting, by VM; an empty one removes
	// a VM that is gone.
	held  map[string]zonegen.Contribution
	zones []HeldZone
	// unverified are the VMs a held listing left out that VMAPI is being
	// asked about (Config.Verify): their removal waits for VMAPI's
	// answer (their own change or removal, which releases them) even
	// once what is left of the hold no longer deletes en masse, since a
	// listing that was short once is not taken at its word for the rest.
	unverified map[string]bool
}

// guard sends the contributions of a bulk change to the store unless they
// and what is already held for cause remove more than the allowed share
// of a zone; replace drops what was held before (a complete re-list is
// the whole picture). The caller holds mu.
func (p *Pipeline) guard(now time.Time, cause string, cs []zonegen.Contribution, replace bool) {
	if len(p.holds) == 0 {
		// Nothing held, so no hold can keep these VMs: when they delete
		// nothing en masse, they pass at once, in the order given, with
		// no hold made of them (a bootstrap's 100k went through two
		// maps here).
		removed, _ := p.removals(slices.Values(cs))
		if len(p.overLimit(removed)) == 0 {
			p.out.AddAll(cs)
			return
		}
	}
	h := p.holds[cause]
	if h == nil || replace {
		old := h
		h = &hold{cause: cause, since: now, held: make(map[string]zonegen.Contribution, len(cs))}
		if old != nil {
			h.since, h.zones, h.unverified = old.since, old.zones, old.unverified
		}
		p.holds[cause] = h
	}
	others := map[*hold]bool{}
	for _, c := range cs {
		// The newest evaluation of a source supersedes what any other
		// hold kept of it: a source waits in one hold only, with its
		// current contribution.
		// A source whose evaluation did not change stays where it
		// waits: a compute-node listing that re-evaluates VMs a re-list
		// holds (as at start, where the two race) is not what removes
		// them, and the operator should see one hold for one cause.
		kept := false
		for _, o := range p.holds {
			held, ok := o.held[c.VM]
			if !ok || o == h {
				continue
			}
			if sameRecords(held, c) {
				o.held[c.VM] = c
				kept = true
				continue
			}
			delete(o.held, c.VM)
			others[o] = true
		}
		if !kept {
			h.held[c.VM] = c
		}
	}
	p.settle(h, now)
	for o := range others {
		p.settle(o, now)
	}
}

// sameRecords reports whether a and b give their VM the same records.
func sameRecords(a, b zonegen.Contribution) bool {
	return a.Unresolved == b.Unresolved && slices.EqualFunc(a.Zones, b.Zones, func(x, y zonegen.ZoneRecords) bool {
		return x.Zone == y.Zone && slices.Equal(x.Records, y.Records)
	})
}

// submit sends contributions computed by a path the guard does not watch
// as a bulk change (an account change, a self-removal falling due, a
// retry, new settings): a source that a hold keeps has its held
// contribution replaced, so that releasing the hold commits what the
// source is now and never what it was when the hold began; the others go
// to the store. The caller holds mu.
func (p *Pipeline) submit(now time.Time, cs []zonegen.Contribution) {
	var direct []zonegen.Contribution
	touched := map[*hold]bool{}
	for _, c := range cs {
		if h := p.holding(c.VM); h != nil {
			h.held[c.VM] = c
			touched[h] = true
			continue
		}
		direct = append(direct, c)
	}
	p.out.AddAll(direct)
	for h := range touched {
		p.settle(h, now)
	}
}

// holding returns the hold that keeps source, or nil. The caller holds mu.
func (p *Pipeline) holding(source string) *hold {
	for _, h := range p.holds {
		if _, ok := h.held[source]; ok {
			return h
		}
	}
	return nil
}

// settle commits the contributions of h that the guard lets through and
// keeps the rest; a hold left with nothing is deleted. The caller holds mu.
func (p *Pipeline) settle(h *hold, now time.Time) {
	removed, byVM := p.removals(maps.Values(h.held))
	over := p.overLimit(removed)
	pass := make([]zonegen.Contribution, 0, len(h.held))
	for vm, c := range h.held {
		if !removesFrom(byVM[vm], over) && !(h.unverified[vm] && len(byVM[vm]) > 0) {
			pass = append(pass, c)
		}
	}
	if len(pass) == len(h.held) {
		clear(h.held) // at once: a listing's are 100k
	} else {
		for i := range pass {
			delete(h.held, pass[i].VM)
		}
	}
	p.out.AddAll(pass)
	if len(h.held) == 0 {
		if len(h.zones) > 0 {
			p.log.Info("mass deletion no longer held: the condition cleared", "cause", h.cause, "since", h.since)
		}
		delete(p.holds, h.cause)
		return
	}
	// One line when the hold begins or its zones change: under churn its
	// counts change with every settle, and Holds (the API, cnsadm status)
	// gives them as they are.
	switch {
	case len(over) == 0 && len(h.zones) > 0:
		p.log.Info("mass deletion no longer held; the VMs the listing left out wait for VMAPI's answer about each",
			"cause", h.cause, "vms", len(h.held), "since", h.since)
	case len(over) > 0 && !slices.EqualFunc(h.zones, over, func(a, b HeldZone) bool { return a.Zone == b.Zone }):
		p.log.Warn("mass deletion held: confirm it or wait for the condition to clear",
			"cause", h.cause, "vms", len(h.held), "zones", describe(over), "share", p.settings.MassDeleteShare)
	}
	if len(h.zones) == 0 {
		h.since = now
	}
	h.zones = over
}

// overLimit returns the zones, sorted, from which removed (records per
// zone) deletes en masse: at least MassDeleteMin records and more than
// MassDeleteShare of what the zone has.
func (p *Pipeline) overLimit(removed map[string]int) []HeldZone {
	var over []HeldZone
	for _, zone := range slices.Sorted(maps.Keys(removed)) {
		size := 0
		if snap := p.cfg.Store.Snapshot(zone); snap != nil {
			size = snap.Len()
		}
		n := removed[zone]
		if n >= p.settings.MassDeleteMin && float64(n) > p.settings.MassDeleteShare*float64(size) {
			over = append(over, HeldZone{Zone: zone, Removed: n, Records: size})
		}
	}
	return over
}

// removals counts, per zone, the records the contributions would remove
// from what their VMs have in the store, in total and per VM. A VM given
// twice counts twice: callers with only the newest of each VM's
// contributions get exact counts, the others counts at least as large.
func (p *Pipeline) removals(cs iter.Seq[zonegen.Contribution]) (map[string]int, map[string]map[string]int) {
	total, byVM := map[string]int{}, map[string]map[string]int{}
	for c := range cs {
		vm := c.VM
		old := p.cfg.Store.Contribution(vm)
		for _, z := range old.Zones {
			n := countMissing(z.Records, c.Records(z.Zone))
			if n == 0 {
				continue
			}
			if byVM[vm] == nil {
				byVM[vm] = map[string]int{}
			}
			byVM[vm][z.Zone] = n
			total[z.Zone] += n
		}
	}
	return total, byVM
}

// countMissing counts the records of old (sorted) that new (sorted) lacks.
func countMissing(old, new []zonegen.Record) int {
	n, j := 0, 0
	for _, r := range old {
		for j < len(new) && new[j].CompareRR(r) < 0 {
			j++
		}
		if j == len(new) || new[j].CompareRR(r) != 0 {
			n++
		}
	}
	return n
}

func removesFrom(byZone map[string]int, over []HeldZone) bool {
	for _, z := range over {
		if byZone[z.Zone] > 0 {
			return true
		}
	}
	return false
}

func describe(zones []HeldZone) string {
	parts := make([]string, len(zones))
	for i, z := range zones {
		parts[i] = fmt.Sprintf("%s: %d of %d records", z.Zone, z.Removed, z.Records)
	}
	return strings.Join(parts, ", ")
}

// release takes vm out of every hold, for a change that settles it
// (destroyed, or changed again): the caller sends its new contribution.
// The caller holds mu.
func (p *Pipeline) release(vm string, now time.Time) {
	for _, h := range p.holds {
		delete(h.unverified, vm)
		if _, ok := h.held[vm]; ok {
			delete(h.held, vm)
			p.settle(h, now)
		}
	}
}

// Holds lists the mass deletions held now, by cause.
func (p *Pipeline) Holds() []Hold {
	p.mu.Lock()
	defer p.mu.Unlock()
	out := make([]Hold, 0, len(p.holds))
	for _, cause := range slices.Sorted(maps.Keys(p.holds)) {
		h := p.holds[cause]
		out = append(out, Hold{Cause: cause, Since: h.since, VMs: slices.Sorted(maps.Keys(h.held)),
			Zones: slices.Clone(h.zones)})
	}
	return out
}

// Confirm lets the mass deletion held for cause take effect: an operator
// has checked that the VMs are really gone. It returns ErrNoHold when
// nothing is held for cause.
func (p *Pipeline) Confirm(cause string) error {
	p.mu.Lock()
	_, ok := p.holds[cause]
	p.mu.Unlock()
	if !ok {
		return fmt.Errorf("%w for %q", ErrNoHold, cause)
	}
	p.queue.push(event{confirm: cause})
	return nil
}

// confirm commits everything held for cause; the caller holds mu.
func (p *Pipeline) confirm(cause string) {
	h := p.holds[cause]
	if h == nil {
		return
	}
	p.log.Warn("mass deletion confirmed by an operator", "cause", cause, "vms", len(h.held), "zones", describe(h.zones))
	p.out.AddAll(slices.Collect(maps.Values(h.held)))
	delete(p.holds, cause)
}
