package store

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"maps"
	"runtime"
	"slices"
	"strings"
	"time"

	"github.com/cnsd/cnsd/parallel"
	"github.com/cnsd/cnsd/zonegen"
)

// Commit applies a batch of contributions, each replacing everything its
// VM contributed before (Unresolved ones are skipped: the VM keeps its
// records; when a VM appears twice the later contribution wins), and
// returns the diff of every zone whose state changed, sorted by zone.
//
// The order is:
//
//  1. plan: per changed zone, the VM replacements, the served-set Diff,
//     the next serial — NextSerial of the zone's serial, or of the floor
//     of a zone name dropped before (floor.go), or of 0 —
//     the trimmed journal and the new Snapshot, all without touching the
//     Store;
//  2. Backend.Apply of every zone's change with the lease epoch; on error
//     Commit returns it and the Store stays exactly as it was;
//  3. install the VM records and publish every new Snapshot in one atomic
//     swap, then signal the watchers;
//  4. drop the zones left with no records (including ones whose drop
//     failed before), except the ones Keep made permanent: they were just published empty at their final
//     serial, carrying the Diff that removes everything; a second Apply
//     deletes them from the backend, then they leave the published
//     snapshots (another swap and signal) and their final serial is kept
//     as the name's floor. A failed drop is logged and retried by the
//     next commit; the empty zone stays published meanwhile.
//
// A zone that comes back after being dropped continues after its final
// serial, so secondaries that still hold it accept the new one. The
// backend keeps that serial with the drop, so this holds across restarts
// and writer takeovers (floor.go).
//
// Commit keeps the contributions' record slices; callers must not modify
// them afterwards.
//
// A zone whose served set is unchanged but whose providers changed (a
// second VM now provides an existing record) still gets a new serial
// with an empty Diff, because the backend only stores per-VM changes with
// one.
//
// When Apply fails, the backend may hold some or all of the batch anyway
// (another zone of the batch failed, or the reply was lost after the
// server wrote): the Store then loads every zone again from the backend,
// so that the caller's retry is planned from what is really stored and
// readers see it too. After ErrFenced it does not: the caller has lost
// the lease and must stop writing; nor after ErrNotDurable, which Apply
// returns before writing anything.
//
// When Apply wrote but no replica acknowledged the write
// (ErrNotReplicated), Commit returns that error and publishes nothing:
// the commit is held (hold.go). The next Commit first applies the held
// changes again, which confirms them or writes them anew on a master
// that lost them, publishes them, and returns their diffs before its own;
// while they are not confirmed it fails the same way, so the caller's
// retry keeps its contributions.
func (s *Store) Commit(ctx context.Context, batch []zonegen.Contribution) ([]Diff, error) {
	changes, built, err := s.commitRecorded(ctx, batch)
	var diffs []Diff
	for i := range changes {
		diffs = append(diffs, changes[i].diff())
	}
	if err == nil {
		s.releaseAfterBuild(built)
	}
	return diffs, err
}

// commitRecorded is Commit but for giving memory back after a large
// build, which it leaves to its caller with the count of records built
// (releaseAfterBuild): the Batcher does it once it no longer holds the
// changes. It returns the changes rather than their diffs, whose records
// a bootstrap's leave unlisted (ZoneChange.addedLater): the Batcher only
// counts them.
func (s *Store) commitRecorded(ctx context.Context, batch []zonegen.Contribution) ([]ZoneChange, int, error) {
	changes, built, err := s.commit(ctx, batch)
	s.lastCommit.Store(&commitOutcome{err: err})
	return changes, built, err
}

// commitOutcome is how the last commit ended, for CommitError.
type commitOutcome struct{ err error }

// CommitError returns the error of the last commit, nil when it
// succeeded or none was made: a full disk or a lost Redis shows here
// while the zones are served as they were.
func (s *Store) CommitError() error {
	if o := s.lastCommit.Load(); o != nil {
		return o.err
	}
	return nil
}

// commit is Commit under s.mu; it also returns how many records it built
// from nothing (builtFromNothing).
func (s *Store) commit(ctx context.Context, batch []zonegen.Contribution) (_ []ZoneChange, built int, err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.following {
		return nil, 0, ErrFollowing
	}
	if s.stale {
		if err := s.reloadLocked(ctx); err != nil {
			return nil, 0, fmt.Errorf("commit: load the zones again after an earlier failed commit: %w", err)
		}
	}
	confirmed, err := s.confirmHeldLocked(ctx)
	if err != nil {
		return nil, 0, err
	}
	if err := s.restoreLostLocked(ctx); err != nil {
		return nil, 0, fmt.Errorf("commit: %w", err)
	}
	t0 := time.Now()
	plans := s.planLocked(*s.zones.Load(), batch)
	now := s.opts.Clock()
	changes := make([]ZoneChange, len(plans))
	t1 := time.Now()
	alongside := s.buildAllLocked(plans, now)
	for i, p := range plans {
		changes[i] = p.change
	}
	t2 := time.Now()
	var times writeTimes
	if len(changes) > 0 {
		if err := s.writeLocked(ctx, plans, changes, "commit zones", &times, alongside); err != nil {
			return nil, 0, err
		}
	}
	for i, p := range plans {
		changes[i] = p.change // with the diffs built alongside the write
	}
	s.dropEmptyLocked(ctx)
	built = builtFromNothing(plans)
	if built >= parallelBuild {
		// A bootstrap's commit is most of its time after the listing:
		// where it goes, without a profile.
		// apply waits for the filled zones' names too, built alongside.
		s.log.Info("large commit", "records", built, "zones", len(plans), "plan", t1.Sub(t0), "build", t2.Sub(t1),
			"apply", times.apply, "alongside", times.alongside, "install", times.install, "took", time.Since(t0))
	}
	return append(confirmed, changes...), built, nil
}

// writeTimes are how long a writeLocked took to apply, to build what it
// built alongside, and to install.
type writeTimes struct{ apply, alongside, install time.Duration }

// writeLocked applies changes, planned as plans (one each, in order),
// under one new commit ID, and installs them. A write no replica
// acknowledged is held (hold.go); any other failure is handled by
// afterFailedApplyLocked. what names the operation in the error.
// times, when not nil, gets how long the steps took. alongside, when
// not nil, runs while Apply writes (buildAllLocked), and has returned
// before anything else is done.
func (s *Store) writeLocked(ctx context.Context, plans []*zonePlan, changes []ZoneChange, what string, times *writeTimes, alongside func()) error {
	id := NewChangeID()
	for i := range changes {
		changes[i].ID, plans[i].change.ID = id, id
	}
	start := time.Now()
	var vmZones map[string][]string
	made := make(chan struct{})
	go func() {
		defer close(made)
		if alongside != nil {
			t := time.Now()
			alongside()
			if times != nil {
				times.alongside = time.Since(t)
			}
		}
		vmZones = s.vmZonesAfter(plans) // reads the Store only, under s.mu held here
	}()
	err := s.b.Apply(ctx, s.opts.Epoch, changes)
	<-made
	if err != nil {
		err = fmt.Errorf("%s %s: %w", what, zoneList(changes), err)
		if s.holdLocked(plans, changes, err) {
			return err
		}
		return s.afterFailedApplyLocked(ctx, err)
	}
	applied := time.Now()
	s.installLocked(plans, vmZones)
	if times != nil {
		times.apply, times.install = applied.Sub(start), time.Since(applied)
	}
	return nil
}

// afterFailedApplyLocked reloads the zones from the backend after Apply
// returned err (see Commit) and returns err, joined with the reload's
// error if that failed too; then the next failed commit tries again.
func (s *Store) afterFailedApplyLocked(ctx context.Context, err error) error {
	if errors.Is(err, ErrFenced) || errors.Is(err, ErrNotDurable) {
		return err // nothing was written
	}
	if rerr := s.reloadLocked(ctx); rerr != nil {
		return errors.Join(err, fmt.Errorf("reload after the failed commit (tried again before the next one): %w", rerr))
	}
	s.log.Warn("commit failed; zones loaded again from the backend", "err", err)
	return err
}

// reloadLocked replaces the Store's zones and per-VM state with what the
// backend holds, publishing every zone that differs in one swap. Until it
// succeeds, the Store is stale and every Commit starts with it.
//
// A zone the backend holds behind what was published is not taken: it
// keeps its snapshot and per-VM state and is marked lost, to be written
// back (restore.go); so is one the backend holds although it was
// dropped, at or below its final serial.
func (s *Store) reloadLocked(ctx context.Context) error {
	s.stale = true
	data, err := s.b.Load(ctx, func(key string, err error) {
		s.log.Warn("skipping a value that cannot be decoded", "key", key, "err", err)
	})
	if err != nil {
		return err
	}
	if err := s.loadFloorsLocked(ctx); err != nil {
		return err
	}
	s.stale = false
	cur := *s.zones.Load()
	oldVMs := s.vms
	s.vms, s.vmZones = map[string]map[string][]Record{}, map[string][]string{}
	set := map[string]*Snapshot{}
	for name, zd := range data {
		old := cur[name]
		if old != nil && behind(zd.Serial, old.serial) {
			s.lost[name] = lostZone{stored: zd.Serial, vms: oldVMs[name]}
			continue
		}
		if old == nil && s.droppedAtOrAbove(name, zd.Serial) {
			s.lost[name] = lostZone{stored: zd.Serial}
			continue
		}
		delete(s.lost, name)
		snap := s.loadZoneLocked(name, zd)
		// A zone's content changes only with its serial: one still at
		// the serial it had keeps its snapshot, and readers see nothing.
		if old == nil || old.serial != snap.serial {
			set[name] = snap
		}
	}
	for name, snap := range cur {
		switch {
		case data[name] != nil:
		case snap.Len() > 0 || s.kept[name]:
			s.lost[name] = lostZone{vms: oldVMs[name]}
		default:
			// Published empty and gone: its drop was written.
			delete(s.lost, name)
			s.keepFloorLocked(name, snap.serial)
			set[name] = nil
		}
	}
	for name, l := range s.lost {
		if cur[name] == nil {
			continue
		}
		s.vms[name] = l.vms
		for vm := range l.vms {
			s.vmZones[vm] = insertSorted(s.vmZones[vm], name)
		}
	}
	if len(s.lost) > 0 {
		s.log.Error("the backend lost commits (a failover or crash): keeping the published zones and writing them back",
			"zones", s.describeLost())
	}
	if len(set) > 0 {
		s.publishLocked(set)
	}
	return nil
}

// latest returns the batch's resolved contributions, the last one per VM,
// in the order VMs first appear.
func latest(batch []zonegen.Contribution) []zonegen.Contribution {
	if slices.IsSortedFunc(batch, func(x, y zonegen.Contribution) int {
		return cmp.Or(strings.Compare(x.VM, y.VM), -1) // a VM twice: not sorted
	}) {
		// No VM twice (the Batcher's batches, sorted by VM): no map of
		// a bootstrap's 100k VMs to find that out.
		if !slices.ContainsFunc(batch, func(c zonegen.Contribution) bool { return c.Unresolved }) {
			return batch
		}
		return slices.DeleteFunc(slices.Clone(batch), func(c zonegen.Contribution) bool { return c.Unresolved })
	}
	at := map[string]int{}
	var out []zonegen.Contribution
	for _, c := range batch {
		if c.Unresolved {
			continue
		}
		if i, ok := at[c.VM]; ok {
			out[i] = c
			continue
		}
		at[c.VM] = len(out)
		out = append(out, c)
	}
	return out
}

// byZone returns a contribution's records per zone, normalized.
func byZone(c zonegen.Contribution) map[string][]Record {
	m := make(map[string][]Record, len(c.Zones))
	for _, z := range c.Zones {
		if prev, ok := m[z.Zone]; ok {
			m[z.Zone] = append(slices.Clip(prev), z.Records...)
		} else {
			m[z.Zone] = z.Records
		}
	}
	for zone, recs := range m {
		if m[zone] = normalize(c.VM, recs); len(m[zone]) == 0 {
			delete(m, zone)
		}
	}
	return m
}

// planLocked finds every zone the batch changes and each VM's change in
// it, sorted by zone.
//
// The changes are gathered per zone first, so that each plan's map of
// VMs is made at its size: grown entry by entry, a bootstrap's 100k VMs
// were rehashed again and again in every large zone. A bootstrap's are
// gathered on every core, each a contiguous part of the batch, joined in
// the batch's order; and its plans made on every core, the largest
// first: serial, they were a third of a second before the backend could
// start writing.
func (s *Store) planLocked(cur map[string]*Snapshot, batch []zonegen.Contribution) []*zonePlan {
	cs := latest(batch)
	workers := 1
	if len(cs) >= parallelPlan {
		workers = min(runtime.GOMAXPROCS(0), len(cs))
	}
	parts := make([]map[string][]vmDelta, workers)
	parallel.Each(workers, workers, func(w int) {
		parts[w] = s.deltasLocked(cs[w*len(cs)/workers : (w+1)*len(cs)/workers])
	})
	deltas := joinDeltas(parts)
	zones := slices.Sorted(maps.Keys(deltas))
	// Largest first, so that the last plan made is a small one.
	order := make([]int, len(zones))
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(a, b int) int { return cmp.Compare(len(deltas[zones[b]]), len(deltas[zones[a]])) })
	plans := make([]*zonePlan, len(zones))
	parallel.Each(len(order), workers, func(k int) {
		zone := zones[order[k]]
		plans[order[k]] = newZonePlan(zone, cur[zone], deltas[zone])
	})
	return plans
}

// deltasLocked returns the change of each VM of cs (each once) in every
// zone it changes, by zone, in the order of cs. It only reads the
// Store: parts of a batch are gathered at once.
func (s *Store) deltasLocked(cs []zonegen.Contribution) map[string][]vmDelta {
	out := map[string][]vmDelta{}
	add := func(zone, vm string, old, nw []Record) {
		if !slices.Equal(old, nw) {
			out[zone] = append(out[zone], vmDelta{vm: vm, old: old, nw: nw})
		}
	}
	for _, c := range cs {
		recs := byZone(c)
		had := s.vmZones[c.VM] // sorted
		for _, zone := range had {
			add(zone, c.VM, s.vms[zone][c.VM], recs[zone])
		}
		for zone, nw := range recs {
			if _, found := slices.BinarySearch(had, zone); !found {
				add(zone, c.VM, s.vms[zone][c.VM], nw)
			}
		}
	}
	return out
}

// joinDeltas joins the parts' changes zone by zone, in the parts' order.
func joinDeltas(parts []map[string][]vmDelta) map[string][]vmDelta {
	if len(parts) == 1 {
		return parts[0]
	}
	sizes := map[string]int{}
	for _, part := range parts {
		for zone, ds := range part {
			sizes[zone] += len(ds)
		}
	}
	out := make(map[string][]vmDelta, len(sizes))
	for zone, n := range sizes {
		joined := make([]vmDelta, 0, n)
		for _, part := range parts {
			joined = append(joined, part[zone]...)
		}
		out[zone] = joined
	}
	return out
}

// parallelPlan is the fewest VMs a commit sorts into zones in parallel;
// tests lower it.
var parallelPlan = 10_000

// zoneList names the zones of changes for an error message.
func zoneList(changes []ZoneChange) string {
	names := make([]string, len(changes))
	for i, c := range changes {
		names[i] = c.Zone
	}
	return strings.Join(names, ",")
}
