package store

import (
	"context"
	"fmt"
	"log/slog"
	"maps"
	"slices"

	"github.com/cnsd/cnsd/zonegen"
)

// ReportVMs is the most VMs a commit may carry and still be logged one
// line per VM; a larger one (a first listing, a re-list) is logged as one
// summary line.
const ReportVMs = 20

// SetDescribe sets what the Batcher adds to its line about one VM's
// published change, such as the VM's alias: describe returns slog
// key-value pairs, or nothing for a VM it does not know. It is called
// from the goroutine that commits, with no lock of the Batcher held.
func (b *Batcher) SetDescribe(describe func(vm string) []any) {
	b.describe.Store(&describe)
}

// before returns what the VMs of batch contributed before it, when the
// batch is small enough to be logged one line per VM and info lines are
// logged; nil otherwise.
func (b *Batcher) before(batch []zonegen.Contribution) []zonegen.Contribution {
	if len(batch) > ReportVMs || !b.log.Enabled(context.Background(), slog.LevelInfo) {
		return nil
	}
	out := make([]zonegen.Contribution, len(batch))
	for i, c := range batch {
		out[i] = b.s.Contribution(c.VM)
	}
	return out
}

// report logs what a commit of batch published: one line per VM whose
// records changed (before being their records until then), or one
// summary line for a large batch. A commit that changed no zone logs
// nothing.
func (b *Batcher) report(batch, before []zonegen.Contribution, diffs []Diff) {
	if len(diffs) == 0 {
		return
	}
	serials := map[string]Serial{}
	added, removed := 0, 0
	for _, d := range diffs {
		serials[d.Zone] = d.To
		added, removed = added+len(d.Added), removed+len(d.Removed)
	}
	if before == nil {
		b.log.Info("VM records published (summary)", "vms", len(batch), "added", added, "removed", removed,
			"serials", serialList(serials, nil))
		return
	}
	var describe func(string) []any
	if f := b.describe.Load(); f != nil {
		describe = *f
	}
	for i, c := range batch {
		gained, lost, zones := recordChanges(before[i], c)
		if len(gained) == 0 && len(lost) == 0 {
			continue
		}
		args := []any{"vm", c.VM}
		if describe != nil {
			args = append(args, describe(c.VM)...)
		}
		args = append(args, "added", gained, "removed", lost, "serials", serialList(serials, zones))
		b.log.Info("VM records published", args...)
	}
}

// recordChanges returns the records next has and prev lacks, those prev
// has and next lacks (as "name TYPE data", sorted) and the zones where
// they differ.
func recordChanges(prev, next zonegen.Contribution) (gained, lost []string, zones map[string]bool) {
	zones = map[string]bool{}
	key := func(r Record) string { return r.Name + " " + r.Type.String() + " " + r.Data }
	sets := func(c zonegen.Contribution) map[string]string {
		m := map[string]string{}
		for _, z := range c.Zones {
			for _, r := range z.Records {
				m[key(r)] = z.Zone
			}
		}
		return m
	}
	old, cur := sets(prev), sets(next)
	for k, z := range cur {
		if _, ok := old[k]; !ok {
			gained, zones[z] = append(gained, k), true
		}
	}
	for k, z := range old {
		if _, ok := cur[k]; !ok {
			lost, zones[z] = append(lost, k), true
		}
	}
	slices.Sort(gained)
	slices.Sort(lost)
	return gained, lost, zones
}

// serialList renders the new serial of each zone in serials (of those in
// only, when only is not nil) as "zone=serial", sorted by zone.
func serialList(serials map[string]Serial, only map[string]bool) []string {
	var out []string
	for _, z := range slices.Sorted(maps.Keys(serials)) {
		if only == nil || only[z] {
			out = append(out, fmt.Sprintf("%s=%d", z, serials[z]))
		}
	}
	return out
}
