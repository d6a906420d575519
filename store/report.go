package store

import (
	"context"
	"fmt"
	"log/slog"
	"maps"
	"slices"
	"strings"

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
// records changed (before being their records until then) with the
// zones' new serials, the records added and removed in each and a sample
// of the names gained and lost; or one summary line for a large batch. A
// commit that changed no zone logs nothing.
func (b *Batcher) report(batch, before []zonegen.Contribution, changes []ZoneChange) {
	if len(changes) == 0 {
		return
	}
	serials := map[string]Serial{}
	added, removed := 0, 0
	for i := range changes {
		c := &changes[i]
		serials[c.Zone] = c.Next
		a, r := c.counts()
		added, removed = added+a, removed+r
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
		ch := changeOf(before[i], c)
		if len(ch.zones) == 0 {
			continue
		}
		args := []any{"vm", c.VM}
		if describe != nil {
			args = append(args, describe(c.VM)...)
		}
		var zones []string
		for _, z := range slices.Sorted(maps.Keys(ch.zones)) {
			n := ch.zones[z]
			zones = append(zones, fmt.Sprintf("%s=%d(+%d,-%d)", z, serials[z], n[0], n[1]))
		}
		args = append(args, "zones", zones, "names_added", sample(ch.gained), "names_removed", sample(ch.lost))
		b.log.Info("VM records published", args...)
	}
}

// vmChange is how one VM's records changed: records added and removed
// per zone, and the names it gained and lost (no record left at them).
type vmChange struct {
	zones        map[string][2]int
	gained, lost []string
}

// changeOf compares a VM's records before and after a commit.
func changeOf(prev, next zonegen.Contribution) vmChange {
	type key struct{ zone, name, typ, data string }
	sets := func(c zonegen.Contribution) (map[key]bool, map[string]bool) {
		recs, names := map[key]bool{}, map[string]bool{}
		for _, z := range c.Zones {
			for _, r := range z.Records {
				recs[key{z.Zone, r.Name, r.Type.String(), r.Data}] = true
				names[r.Name] = true
			}
		}
		return recs, names
	}
	oldRecs, oldNames := sets(prev)
	curRecs, curNames := sets(next)
	ch := vmChange{zones: map[string][2]int{}}
	for k := range curRecs {
		if !oldRecs[k] {
			n := ch.zones[k.zone]
			n[0]++
			ch.zones[k.zone] = n
		}
	}
	for k := range oldRecs {
		if !curRecs[k] {
			n := ch.zones[k.zone]
			n[1]++
			ch.zones[k.zone] = n
		}
	}
	for n := range curNames {
		if !oldNames[n] {
			ch.gained = append(ch.gained, n)
		}
	}
	for n := range oldNames {
		if !curNames[n] {
			ch.lost = append(ch.lost, n)
		}
	}
	return ch
}

// sampleNames is how many names a line about one VM lists of those it
// gained or lost.
const sampleNames = 4

// sample returns the first sampleNames of names, sorted shortest first
// (the instance and service names before their longer variants), and
// how many more there are.
func sample(names []string) []string {
	slices.SortFunc(names, func(a, b string) int {
		if n := len(a) - len(b); n != 0 {
			return n
		}
		return strings.Compare(a, b)
	})
	if len(names) <= sampleNames {
		return names
	}
	return append(names[:sampleNames:sampleNames], fmt.Sprintf("and %d more", len(names)-sampleNames))
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
