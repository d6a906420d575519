package pipeline

import (
	"context"
	"strings"

	"github.com/cnsd/cnsd/zonegen"
)

// describeVM is what the store's line about a VM's published change adds
// to the VM's uuid: its alias, when the pipeline knows the VM and it has
// one.
func (p *Pipeline) describeVM(vm string) []any {
	p.mu.Lock()
	defer p.mu.Unlock()
	if st := p.vms[vm]; st != nil && st.vm.Alias != "" {
		return []any{"alias", st.vm.Alias}
	}
	return nil
}

// recordChange counts the records a source gains and loses.
type recordChange struct{ added, removed int }

// recordChanges returns, for each contribution of cs whose records
// differ from what its source has in the store (or waits to be committed
// with), how they change.
// Unresolved contributions change nothing.
func (p *Pipeline) recordChanges(cs []zonegen.Contribution) map[string]recordChange {
	out := map[string]recordChange{}
	for _, c := range cs {
		if c.Unresolved {
			continue
		}
		prev, ok := p.out.Latest(c.VM)
		if !ok {
			prev = p.cfg.Store.Contribution(c.VM)
		}
		old, cur := recordSet(prev), recordSet(c)
		var ch recordChange
		for n := range cur {
			if !old[n] {
				ch.added++
			}
		}
		for n := range old {
			if !cur[n] {
				ch.removed++
			}
		}
		if ch != (recordChange{}) {
			out[c.VM] = ch
		}
	}
	return out
}

// recordSet returns c's records (zone, name, type and data).
func recordSet(c zonegen.Contribution) map[[4]string]bool {
	m := map[[4]string]bool{}
	for _, z := range c.Zones {
		for _, r := range z.Records {
			m[[4]string{z.Zone, r.Name, r.Type.String(), r.Data}] = true
		}
	}
	return m
}

// sum adds up the changes of the sources in for that of says, and
// counts those that changed.
func sum(changes map[string]recordChange, of func(source string) bool) (changed int, total recordChange) {
	for src, ch := range changes {
		if !of(src) {
			continue
		}
		changed++
		total.added += ch.added
		total.removed += ch.removed
	}
	return changed, total
}

// reportServers logs one line per compute node of servers whose change
// moved records of its VMs (its own CMON name alone is left to the
// store's line about what was published). The caller holds mu.
func (p *Pipeline) reportServers(servers []string, changes map[string]recordChange) {
	if !p.serversListed {
		// CNAPI's first listing changes no compute node: it is what
		// the VMs were evaluated with, or are about to be.
		p.serversListed = true
		return
	}
	seen := map[string]bool{}
	for _, id := range servers {
		if seen[id] {
			continue
		}
		seen[id] = true
		vms := p.byServer[id]
		changed, total := sum(changes, func(src string) bool { _, ok := vms[src]; return ok })
		if changed == 0 {
			continue
		}
		args := []any{"server", strings.ToLower(id)}
		if srv, ok := p.res.servers.Server(id); ok {
			args = append(args, "hostname", srv.Hostname, "status", srv.Status, "setup", srv.Setup)
		} else {
			args = append(args, "status", "not listed by CNAPI")
		}
		args = append(args, "vms", len(vms), "vms_changed", changed, "records_added", total.added, "records_removed", total.removed)
		p.log.Info("compute node changed: its VMs' records moved", args...)
	}
}

// applyAccount evaluates the VMs of account uuid again and logs a line
// when their records moved.
func (p *Pipeline) applyAccount(ctx context.Context, uuid string) {
	p.mu.Lock()
	vms := p.vmsOf(p.byOwner, []string{uuid})
	p.mu.Unlock()
	now := p.cfg.Clock()
	cs := p.evaluateAll(ctx, vms, now, "", nil)
	changes := p.recordChanges(cs)
	p.mu.Lock()
	p.submit(now, cs)
	p.mu.Unlock()
	changed, total := sum(changes, func(string) bool { return true })
	if changed == 0 {
		return
	}
	args := []any{"account", uuid}
	if co, ok := p.res.owners.(CachedOwners); ok {
		if acct, ok := co.Cached(uuid); ok && acct.Login != "" {
			args = append(args, "login", acct.Login)
		}
	}
	args = append(args, "vms", len(vms), "vms_changed", changed, "records_added", total.added, "records_removed", total.removed)
	p.log.Info("account changed: its VMs' records moved", args...)
}
