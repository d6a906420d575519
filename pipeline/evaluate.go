package pipeline

import (
	"context"
	"log/slog"
	"slices"
	"strings"
	"time"

	"github.com/cnsd/cnsd/hysteresis"
	"github.com/cnsd/cnsd/zonegen"
)

// evaluate decides st's records at now. ok is false when a lookup failed:
// the VM keeps what it published and is retried.
func (p *Pipeline) evaluate(ctx context.Context, st *vmState, now time.Time, memo *lookups) (c zonegen.Contribution, ok bool) {
	o := p.decide(ctx, st, now, memo)
	generate(p.gen, &o)
	return p.record(ctx, st, now, &o)
}

// decide is the part of evaluate that must run one VM after the other:
// the lookups and the decision, damped (see resolver.decide).
func (p *Pipeline) decide(ctx context.Context, st *vmState, now time.Time, memo *lookups) Outcome {
	return p.res.decide(ctx, st.vm, p.settings.Decide, now, memo, func(d *zonegen.Decision) {
		p.mu.Lock()
		defer p.mu.Unlock()
		p.damp(now, st, d)
	})
}

// record keeps st's generated outcome o as its state and returns its
// contribution, or ok false when it is unresolved (then retried).
func (p *Pipeline) record(ctx context.Context, st *vmState, now time.Time, o *Outcome) (c zonegen.Contribution, ok bool) {
	d := o.Decision
	p.mu.Lock()
	defer p.mu.Unlock()
	st.evaluated = now
	if d.Unresolved {
		st.decision = d
		p.retry[st.vm.UUID] = true
		p.warnNIC(st.vm, d.Reasons)
		return zonegen.Contribution{}, false
	}
	delete(p.retry, st.vm.UUID)
	st.decision, st.notes = d, o.Contribution.Notes
	if p.log.Enabled(ctx, slog.LevelDebug) {
		p.log.Debug("vm evaluated", "vm", st.vm.UUID, "instance", d.Instance, "services", len(d.Services),
			"zones", len(o.Contribution.Zones), "reasons", d.Reasons)
	}
	return o.Contribution, true
}

// damp reports the VM's status in each of its services to the hysteresis
// tracker and keeps it listed where a self-removal has not taken effect;
// held reports whether that changed d. The caller holds mu.
func (p *Pipeline) damp(now time.Time, st *vmState, d *zonegen.Decision) (held bool) {
	uuid, owner := st.vm.UUID, strings.ToLower(st.vm.OwnerUUID)
	var keys []string
	for i := range d.Services {
		name := d.Services[i].Name
		key := owner + "/" + name
		if slices.Contains(keys, key) {
			continue
		}
		switch {
		case d.Services[i].Listed:
			p.tracker.Set(now, key, uuid, hysteresis.Up)
		case d.SelfRemoval && d.Instance:
			if !slices.Contains(st.services, key) && p.published(uuid, name) {
				// Published before this process knew it (a restart, a
				// new policy): its removal is damped from now.
				p.tracker.Set(now, key, uuid, hysteresis.Up)
			}
			if p.tracker.Set(now, key, uuid, hysteresis.SelfDown) {
				for d.Hold(name) {
					held = true
				}
			}
		default:
			p.tracker.Set(now, key, uuid, hysteresis.Gone)
			continue
		}
		keys = append(keys, key)
	}
	for _, key := range st.services {
		if !slices.Contains(keys, key) {
			p.tracker.Set(now, key, uuid, hysteresis.Gone)
		}
	}
	st.services = keys
	return held
}

// published reports whether the store holds records of vm under service
// name: whether the VM is listed in it as far as clients can tell.
func (p *Pipeline) published(vm, name string) bool {
	prefix := strings.ToLower(name) + ".svc."
	for _, z := range p.cfg.Store.Contribution(vm).Zones {
		for _, r := range z.Records {
			if strings.HasPrefix(r.Name, prefix) || strings.Contains(r.Name, "."+prefix) {
				return true
			}
		}
	}
	return false
}

// absoluteZones gives the zone names of c the trailing dot the store and
// the DNS server use (zonegen names zones as configured, without it).
func absoluteZones(c *zonegen.Contribution) {
	for i := range c.Zones {
		if z := c.Zones[i].Zone; !strings.HasSuffix(z, ".") {
			c.Zones[i].Zone = z + "."
		}
	}
}

// warnNIC logs, at most once a minute per VM, that a NIC of vm could not
// be repaired from NAPI (the first of reasons says so when it could not):
// the VM is retried every RetryInterval, and each retry would log it
// again. The caller holds mu.
func (p *Pipeline) warnNIC(vm zonegen.VM, reasons []zonegen.Reason) {
	if len(reasons) == 0 || reasons[0].Code != zonegen.ReasonNetworkUnknown || !strings.HasPrefix(reasons[0].Detail, "nic ") {
		return
	}
	p.warns.Warn(p.log, "nic/"+vm.UUID, "a NIC of the VM cannot be repaired from NAPI; the VM keeps its records and is retried",
		"vm", vm.UUID, "alias", vm.Alias, "reason", reasons[0].Detail)
}
