// Restoring zones a backend lost.
//
// A Redis failover to a replica that had not received the last commits,
// a restarted master that comes back with an older append-only file for
// the seconds before Sentinel demotes it, or a Redis crash with a lax
// appendfsync leaves the backend behind what the writer has already
// published — and secondaries have already transferred. Taking the
// backend's state then would move serials backwards and serve, under a
// serial secondaries know, records they do not hold. The writer's own
// snapshots are what was published, so they win: every zone the backend
// holds at a serial below the published one (or no longer holds at all
// while it was published with records) keeps its published snapshot and
// its per-VM state, and is written back whole (ZoneChange.Replace) at the
// next serial, with an empty diff. A zone the backend holds although
// this writer dropped it, at or below its final serial, is written empty
// and dropped again, so that its floor stays above what secondaries saw.

package store

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"slices"
	"strings"
)

// lostZone is a zone the backend lost commits of: the serial it holds
// the zone at (0 when it does not hold it).
type lostZone struct {
	stored Serial
	// vms is the zone's per-VM state as the Store had it before the
	// reload that found the loss; nil for a zone this writer dropped.
	vms map[string][]Record
}

// behind reports whether the backend's serial stored is older, in RFC
// 1982 order, than the published one.
func behind(stored, published Serial) bool { return stored.Less(published) }

// restoreLostLocked writes every lost zone back (see the file comment)
// and publishes the restored ones at their new serial. It returns the
// joined errors of the zones it could not restore; those stay lost and
// are tried again by the next commit.
func (s *Store) restoreLostLocked(ctx context.Context) error {
	if len(s.lost) == 0 {
		return nil
	}
	now := s.opts.Clock()
	cur := *s.zones.Load()
	var plans []*zonePlan
	var changes []ZoneChange
	var redrop []ZoneChange
	for _, zone := range slices.Sorted(maps.Keys(s.lost)) {
		l := s.lost[zone]
		snap := cur[zone]
		if snap == nil {
			// Dropped by this writer: empty it above its final
			// serial, then drop it from there.
			// l.stored is at or below the floor, or the zone would
			// not be lost.
			next := s.nextSerialLocked(s.dropped[zone], now)
			changes = append(changes, ZoneChange{Zone: zone, Prev: l.stored, Next: next, Replace: true,
				Diff: Diff{Zone: zone, From: l.stored, To: next}, KeepJournal: 1})
			redrop = append(redrop, ZoneChange{Zone: zone, Prev: next, Next: next, Drop: true})
			plans = append(plans, nil)
			continue
		}
		p := &zonePlan{zone: zone, cur: snap, set: map[string][]Record{}, ops: map[string][]op{}}
		s.buildLocked(p, now)
		p.change.Prev, p.change.Replace = l.stored, true
		p.change.SetVMs, p.change.DelVMs, p.change.setOrder = maps.Clone(l.vms), nil, nil
		p.change.KeepJournal = 1
		plans = append(plans, p)
		changes = append(changes, p.change)
	}
	id := NewChangeID()
	for i := range changes {
		changes[i].ID = id
	}
	if err := s.b.Apply(ctx, s.opts.Epoch, changes); err != nil {
		// What it wrote, if anything, the next reload sees: a zone
		// restored is no longer behind, one not restored still is.
		s.stale = true
		return fmt.Errorf("write back zones %s the backend lost commits of: %w", zoneList(changes), err)
	}
	if len(redrop) > 0 {
		if err := s.b.Apply(ctx, s.opts.Epoch, redrop); err != nil {
			s.stale = true
			return fmt.Errorf("drop again zones %s the backend still held: %w", zoneList(redrop), err)
		}
	}
	var restored []*zonePlan
	for i, p := range plans {
		zone := changes[i].Zone
		if p != nil {
			restored = append(restored, p)
			s.log.Warn("zone written back to the backend, which had lost commits: published serial kept and raised",
				"zone", zone, "backend_serial", s.lost[zone].stored, "serial", p.next.serial)
		} else {
			s.keepFloorLocked(zone, changes[i].Next)
			s.log.Warn("zone dropped again: the backend had lost its drop", "zone", zone,
				"backend_serial", s.lost[zone].stored, "floor", changes[i].Next)
		}
		delete(s.lost, zone)
	}
	s.restored.Add(int64(len(changes)))
	if len(restored) > 0 {
		s.installLocked(restored, nil)
	}
	return nil
}

// ZonesRestored returns how many zones the Store has written back to a
// backend that had lost commits of them, since it was opened.
func (s *Store) ZonesRestored() int64 { return s.restored.Load() }

// SerialLister is a Backend that lists every zone's serial without
// reading the zones, for Verify.
type SerialLister interface {
	Serials(ctx context.Context) (map[string]Serial, error)
}

// SerialHinter is a Backend through which following processes tell the
// writer of serials they serve above the store's. A follower that finds
// the store holding a zone below the serial it serves (or at or below the
// serial it saw the zone dropped at) keeps serving its own and hints that
// serial; the writer's Verify raises the zone past it, so that the
// follower takes the writer's zone again without its serial going back.
// That happens when a failover lost commits the follower had seen and the
// writer had not (a new writer, or one whose view was reloaded).
type SerialHinter interface {
	HintSerial(ctx context.Context, zone string, serial Serial) error
	SerialHints(ctx context.Context) (map[string]Serial, error)
	ClearSerialHint(ctx context.Context, zone string, serial Serial) error
}

// Verify compares the backend's zone serials with the published ones and
// writes back every zone the backend lost commits of (see restore.go),
// returning the zones it found behind. A backend that cannot list its
// serials cheaply (not a SerialLister) is not checked. A following Store
// returns ErrFollowing: only the writer writes back.
func (s *Store) Verify(ctx context.Context) ([]string, error) {
	sl, ok := s.b.(SerialLister)
	if !ok {
		return nil, nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.following {
		return nil, ErrFollowing
	}
	stored, err := sl.Serials(ctx)
	if err != nil {
		return nil, fmt.Errorf("verify the backend: %w", err)
	}
	var found []string
	for zone, snap := range *s.zones.Load() {
		st, ok := stored[zone]
		if (!ok && (snap.Len() > 0 || s.kept[zone])) || (ok && behind(st, snap.serial)) {
			found = append(found, zone)
		}
	}
	for zone, st := range stored {
		if (*s.zones.Load())[zone] != nil {
			continue
		}
		if s.droppedAtOrAbove(zone, st) {
			found = append(found, zone)
		}
	}
	slices.Sort(found)
	if len(found) > 0 || s.stale {
		if err := s.reloadLocked(ctx); err != nil {
			return found, fmt.Errorf("verify the backend: load the zones again: %w", err)
		}
		if err := s.restoreLostLocked(ctx); err != nil {
			return found, fmt.Errorf("verify the backend: %w", err)
		}
	}
	return found, s.raiseHintedLocked(ctx)
}

// raiseHintedLocked raises every zone a follower hinted a serial at or
// above the zone's for, past that serial, and clears the hints dealt
// with.
func (s *Store) raiseHintedLocked(ctx context.Context) error {
	h, ok := s.b.(SerialHinter)
	if !ok {
		return nil
	}
	hints, err := h.SerialHints(ctx)
	if err != nil || len(hints) == 0 {
		return err
	}
	var errs []error
	for _, zone := range slices.Sorted(maps.Keys(hints)) {
		above := hints[zone]
		if snap := (*s.zones.Load())[zone]; snap != nil && !above.Less(snap.serial) {
			// A follower hints its own serial when the store is behind
			// it, or at it with other records (another writer reached
			// that serial on its own): either way past it, strictly.
			serial, reached, err := s.raisePastLocked(ctx, zone, above)
			if err != nil {
				errs = append(errs, err)
				continue
			}
			s.log.Warn("serial raised past one a follower serves, saw the zone dropped at, or saw a secondary serve (a failover lost commits)",
				"zone", zone, "follower_serial", above, "serial", serial)
			if !reached {
				continue // the second step comes with the next Verify
			}
		}
		if err := h.ClearSerialHint(ctx, zone, above); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// describeLost names the lost zones and their stored serials for a log
// line.
func (s *Store) describeLost() string {
	var b strings.Builder
	for i, zone := range slices.Sorted(maps.Keys(s.lost)) {
		if i > 0 {
			b.WriteString(",")
		}
		fmt.Fprintf(&b, "%s@%d", zone, s.lost[zone].stored)
	}
	return b.String()
}

// OpenAfter opens a writing Store on b like Open, for a process that
// served prev (a Store that followed the previous writer) until it took
// the lease over. The backend may have lost commits prev served (the
// failover that lost them may also have handed over the lease): every
// zone prev serves at a serial ahead of the backend's, or with records
// while the backend lacks it, is served as prev served it and written
// back by the first commit or Verify, and a zone prev saw dropped that
// the backend holds again at or below its final serial is dropped again,
// as for the writer's own losses (see the file comment). The per-VM state
// of a zone taken from prev is what its snapshot says each VM provides;
// the listing a new writer starts with corrects what that misses.
func OpenAfter(ctx context.Context, b Backend, opts Options, log *slog.Logger, prev *Store) (*Store, error) {
	s, err := Open(ctx, b, opts, log)
	if err != nil || prev == nil {
		return s, err
	}
	prev.mu.Lock()
	prevDropped := maps.Clone(prev.dropped)
	prev.mu.Unlock()
	s.mu.Lock()
	defer s.mu.Unlock()
	for zone, f := range prevDropped {
		s.keepFloorLocked(zone, f)
	}
	cur := *s.zones.Load()
	set := map[string]*Snapshot{}
	for zone, snap := range *prev.zones.Load() {
		stored := cur[zone]
		switch {
		case stored == nil && (snap.Len() == 0 || s.droppedAtOrAbove(zone, snap.serial)):
			continue // dropped since, or about to be
		case stored != nil && !behind(stored.serial, snap.serial):
			continue
		}
		l := lostZone{vms: vmsOf(snap)}
		if stored != nil {
			l.stored = stored.serial
			s.forgetZoneLocked(zone)
		}
		s.lost[zone] = l
		s.unconfirmed[zone] = true
		s.vms[zone] = l.vms
		for vm := range l.vms {
			s.vmZones[vm] = insertSorted(s.vmZones[vm], zone)
		}
		set[zone] = snap
	}
	for zone, stored := range cur {
		if (*prev.zones.Load())[zone] == nil && s.droppedAtOrAbove(zone, stored.serial) {
			s.forgetZoneLocked(zone)
			s.lost[zone] = lostZone{stored: stored.serial}
			set[zone] = nil
		}
	}
	if len(s.lost) > 0 {
		s.log.Error("the store is behind zones this process served (a failover lost commits): serving them as before until they are written back",
			"zones", s.describeLost())
		s.publishLocked(set)
	}
	s.setTakeoverBaseLocked(s.opts.Clock())
	return s, nil
}

// vmsOf returns what each VM provides in snap, published or held by
// the member cap, the per-VM state a Store keeps (normalized lists).
func vmsOf(snap *Snapshot) map[string][]Record {
	vms := map[string][]Record{}
	it := snap.names.Iterator()
	for !it.Done() {
		_, n, _ := it.Next()
		for _, x := range editOf(n) { // held members' records too
			r := x.rec
			vms[r.Source] = append(vms[r.Source], r)
			for _, vm := range x.more {
				r.Source = vm
				vms[vm] = append(vms[vm], r)
			}
		}
	}
	for vm, recs := range vms {
		vms[vm] = normalize(vm, recs)
	}
	return vms
}
