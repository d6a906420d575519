package store

import (
	"context"
	"errors"
	"fmt"
	"iter"
	"time"
)

// followRetry is how long Follow waits before trying again after a
// failed catch-up when no new change arrives meanwhile.
const followRetry = time.Second

// Follow keeps the Store current with the commits another process makes,
// for a process that does not hold the lease: after every change f
// signals it asks, per zone, for the journal since its serial and applies
// it (or takes the whole zone when the journal does not reach back), and
// forgets zones f no longer lists. It runs until ctx ends, then returns
// nil. Errors are logged and retried.
//
// Journal diffs carry served records, not each VM's: a Store that has
// followed refuses Commit (ErrFollowing); a process that wins the lease
// opens a new Store.
func (s *Store) Follow(ctx context.Context, f Follower) error {
	s.mu.Lock()
	s.following = true
	s.mu.Unlock()
	changed := f.Changed(ctx)
	failing := false // logged once per outage, not once a second
	for {
		var retry <-chan time.Time
		err := s.catchUp(ctx, f)
		switch {
		case err != nil && ctx.Err() == nil:
			if !failing {
				s.log.Warn("following the writer failed; retrying every second, serving the zones as they are", "err", err)
			}
			failing = true
			retry = time.After(followRetry)
		case err == nil && failing:
			s.log.Info("following the writer again")
			failing = false
		}
		select {
		case <-ctx.Done():
			return nil
		case _, ok := <-changed:
			if !ok {
				return nil
			}
		case <-retry:
		}
	}
}

// catchUp brings every zone to the serial f has, publishing the changed
// zones in one swap.
func (s *Store) catchUp(ctx context.Context, f Follower) error {
	names, err := f.Zones(ctx)
	if err != nil {
		return fmt.Errorf("follow: list zones: %w", err)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	cur := *s.zones.Load()
	set := map[string]*Snapshot{}
	listed := map[string]bool{}
	var errs []error
	stored := s.unconfirmedSerialsLocked(ctx, f)
	for _, zone := range names {
		listed[zone] = true
		if st, ok := stored[zone]; ok && behind(st, cur[zone].serial) {
			// Not past the served serial yet: no need to load it.
			errs = append(errs, backendBehind(zone, st, cur[zone].serial))
			continue
		}
		next, err := s.followZoneLocked(ctx, f, zone, cur[zone])
		if err != nil {
			errs = append(errs, err)
		} else if next != cur[zone] {
			set[zone] = next
		}
	}
	s.hintLocked(ctx, cur, errs)
	var floors map[string]Serial
	floorsRead := false
	now := s.opts.Clock()
	for zone, snap := range cur {
		if listed[zone] {
			delete(s.vanished, zone)
			continue
		}
		if !floorsRead {
			floorsRead = true
			var ferr error
			if floors, ferr = s.b.Floors(ctx); ferr != nil {
				errs = append(errs, fmt.Errorf("follow: read the serial floors: %w", ferr))
			}
		}
		// A zone is published empty before it is dropped; one that
		// vanishes with records was dropped only if its floor is at or
		// past the served serial (a missed empty serial). Otherwise the
		// backend lost it and the writer writes it back (restore.go):
		// keep serving it meanwhile, for vanishGrace at most.
		f, dropped := floors[zone]
		if snap.Len() > 0 && (!dropped || f.Less(snap.serial)) {
			since, ok := s.vanished[zone]
			if !ok {
				s.vanished[zone], since = now, now
			}
			if now.Sub(since) < vanishGrace {
				errs = append(errs, fmt.Errorf("follow: zone %s at serial %d is gone from the backend without a drop: %w", zone, snap.serial, errBackendBehind))
				continue
			}
			s.log.Error("zone gone from the store without a drop and not written back; no longer served", "zone", zone, "serial", snap.serial, "after", vanishGrace)
		}
		delete(s.vanished, zone)
		s.forgetZoneLocked(zone)
		s.keepFloorLocked(zone, snap.serial)
		if dropped {
			s.keepFloorLocked(zone, f)
		}
		set[zone] = nil
	}
	if len(set) > 0 {
		s.publishLocked(set)
	}
	return errors.Join(errs...)
}

// followZoneLocked returns zone's snapshot brought up to date (snap itself
// when nothing changed; snap is nil for a zone not known yet).
func (s *Store) followZoneLocked(ctx context.Context, f Follower, zone string, snap *Snapshot) (*Snapshot, error) {
	if snap != nil && s.unconfirmed[zone] {
		return s.confirmZoneLocked(ctx, f, zone, snap)
	}
	var since Serial
	if snap != nil {
		since = snap.serial
	}
	diffs, zd, err := f.Since(ctx, zone, since)
	switch {
	case err != nil:
		return snap, fmt.Errorf("follow zone %s since %d: %w", zone, since, err)
	case zd != nil && snap != nil && behind(zd.Serial, snap.serial):
		return snap, backendBehind(zone, zd.Serial, snap.serial)
	case zd != nil && snap == nil && s.droppedAtOrAbove(zone, zd.Serial):
		return nil, &behindError{zone, fmt.Sprintf("follow zone %s: the backend holds serial %d of a zone dropped at %d: %v", zone, zd.Serial, s.dropped[zone], errBackendBehind)}
	case zd != nil:
		s.forgetZoneLocked(zone)
		return s.loadZoneLocked(zone, zd), nil
	}
	if n := len(diffs); snap == nil && n > 0 && s.droppedAtOrAbove(zone, diffs[n-1].To) {
		return nil, &behindError{zone, fmt.Sprintf("follow zone %s: the backend holds serial %d of a zone dropped at %d: %v", zone, diffs[n-1].To, s.dropped[zone], errBackendBehind)}
	}
	// No diffs and no data: the zone is at since, or it was dropped
	// after f listed it (then the next change removes it).
	for _, d := range diffs {
		if snap != nil && !snap.serial.Less(d.To) {
			continue // already applied
		}
		if d.From != since && snap != nil {
			s.log.Warn("journal skips a serial; taking the zone from its start", "zone", zone, "serial", since, "from", d.From)
			return s.followZoneLocked(ctx, f, zone, nil)
		}
		if d.From != since {
			return snap, fmt.Errorf("follow zone %s: journal skips from %d to %d", zone, since, d.From)
		}
		snap = s.applyDiff(zone, snap, d)
		since = snap.serial
	}
	return snap, nil
}

// confirmZoneLocked follows an unconfirmed zone (Store.unconfirmed):
// it takes the backend's zone whole, never a diff from the served serial
// (the backend's journal at that serial may start from other records),
// and only when the backend is past the served serial, or at it with the
// same records. At it with other records, the zone is behind: the
// follower goes on serving its own and hints the writer, which raises
// the zone past it (raiseHintedLocked).
func (s *Store) confirmZoneLocked(ctx context.Context, f Follower, zone string, snap *Snapshot) (*Snapshot, error) {
	whole, err := s.followZoneLocked(ctx, f, zone, nil)
	switch {
	case err != nil:
		return snap, err
	case whole == nil || behind(whole.serial, snap.serial):
		// Not in the backend, or behind: as for any zone (follow's
		// vanish grace, hints).
		var at Serial
		if whole != nil {
			at = whole.serial
		}
		return snap, backendBehind(zone, at, snap.serial)
	case whole.serial == snap.serial && !sameRecords(whole, snap):
		s.log.Warn("the backend holds the served serial of a zone with other records (a writer that missed this process's commits reached it): serving the zone as it was until the writer raises it past",
			"zone", zone, "serial", snap.serial)
		return snap, &behindError{zone, fmt.Sprintf("follow zone %s: the backend holds serial %d with other records than served: %v", zone, snap.serial, errBackendBehind)}
	}
	delete(s.unconfirmed, zone)
	if whole.serial != snap.serial {
		// The backend's journal from the served serial, or before it,
		// may start from other records than the ones served then (and
		// held by a secondary that transferred them from here): an
		// IXFR from there must fall back to AXFR.
		kept := whole.journal[:0]
		for _, e := range whole.journal {
			if snap.serial.Less(e.from) {
				kept = append(kept, e)
			}
		}
		whole.jbytes = 0
		for _, e := range kept {
			whole.jbytes += e.size()
		}
		whole.journal = kept
	}
	return whole, nil
}

// unconfirmedSerialsLocked returns the backend's serials of the
// unconfirmed zones (Store.unconfirmed) that it holds, when there are
// such zones and f lists serials cheaply: an unconfirmed zone is taken
// whole, so one the backend still holds behind the served serial (until
// the writer writes it back or raises it) is not loaded at every wake.
func (s *Store) unconfirmedSerialsLocked(ctx context.Context, f Follower) map[string]Serial {
	sl, ok := f.(SerialLister)
	if !ok || len(s.unconfirmed) == 0 {
		return nil
	}
	all, err := sl.Serials(ctx)
	if err != nil {
		return nil // each zone is followed as without them
	}
	cur := *s.zones.Load()
	stored := map[string]Serial{}
	for zone := range s.unconfirmed {
		if st, ok := all[zone]; ok && cur[zone] != nil {
			stored[zone] = st
		}
	}
	return stored
}

// backendBehind is the error of a zone the backend holds at serial at,
// behind the served one.
func backendBehind(zone string, at, served Serial) error {
	return &behindError{zone, fmt.Sprintf("follow zone %s: the backend holds serial %d, behind the served %d: %v", zone, at, served, errBackendBehind)}
}

// sameRecords reports whether a and b hold the same records.
func sameRecords(a, b *Snapshot) bool {
	if a.Len() != b.Len() {
		return false
	}
	next, stop := iter.Pull(b.All())
	defer stop()
	for r := range a.All() {
		o, ok := next()
		if !ok || rrCompare(r, o) != 0 || r.Source != o.Source {
			return false
		}
	}
	return true
}

// vanishGrace is how long a follower keeps serving a zone that left the
// store without a drop (a failover lost it) before it stops: the writer
// writes such a zone back within a second when it knows it (restore.go).
const vanishGrace = 10 * time.Second

// hintLocked tells the writer, through a backend that takes hints, of
// each zone errs found the store behind on: the serial this Store serves
// it at, or the one it saw it dropped at (SerialHinter).
func (s *Store) hintLocked(ctx context.Context, cur map[string]*Snapshot, errs []error) {
	h, ok := s.b.(SerialHinter)
	if !ok {
		return
	}
	for _, err := range errs {
		var be *behindError
		if !errors.As(err, &be) {
			continue
		}
		serial := s.dropped[be.zone]
		if snap := cur[be.zone]; snap != nil {
			serial = snap.serial
		}
		if herr := h.HintSerial(ctx, be.zone, serial); herr != nil {
			s.log.Debug("cannot hint the writer of a serial", "zone", be.zone, "serial", serial, "err", herr)
		}
	}
}

// behindError is followZoneLocked's error for a zone the backend holds
// behind this Store.
type behindError struct {
	zone string
	msg  string
}

func (e *behindError) Error() string { return e.msg }
func (e *behindError) Unwrap() error { return errBackendBehind }

// errBackendBehind: the backend holds a zone behind what this Store
// serves; a follower keeps serving its own until the writer has written
// the zone back (restore.go).
var errBackendBehind = errors.New("the backend lost commits; serving the zone as it was until the writer writes it back")

// droppedAtOrAbove reports whether zone was dropped at serial or later.
func (s *Store) droppedAtOrAbove(zone string, serial Serial) bool {
	f, ok := s.dropped[zone]
	return ok && !f.Less(serial)
}

// applyDiff returns snap (nil for a new zone) with d applied: removed
// records leave whoever provided them, added ones are provided by their
// Source.
func (s *Store) applyDiff(zone string, snap *Snapshot, d Diff) *Snapshot {
	next := emptySnapshot(zone, 0)
	if snap != nil {
		next = snap.clone()
	}
	edits := map[string]edit{}
	get := func(name string) edit {
		if e, ok := edits[name]; ok {
			return e
		}
		n, _ := next.names.Get(name)
		return servedOf(n) // a follower mirrors what the writer serves
	}
	for _, r := range d.Removed {
		edits[r.Name] = get(r.Name).drop(r)
	}
	for _, r := range d.Added {
		edits[r.Name] = get(r.Name).add(r, r.Source)
	}
	names := newNameMap(next.names)
	for name, e := range edits {
		old, _ := next.names.Get(name)
		nn := e.node(name, 0)
		next.replaced(old, nn)
		names.set(name, nn)
	}
	next.names, next.serial, next.committed = names.done(), d.To, s.opts.Clock()
	next.addJournal(d, &s.opts)
	return next
}

// forgetZoneLocked drops zone from the per-VM state.
func (s *Store) forgetZoneLocked(zone string) {
	for vm := range s.vms[zone] {
		if s.vmZones[vm] = removeSorted(s.vmZones[vm], zone); len(s.vmZones[vm]) == 0 {
			delete(s.vmZones, vm)
		}
	}
	delete(s.vms, zone)
}
