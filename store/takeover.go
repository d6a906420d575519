// Serials after a takeover.
//
// A failover of a shared backend can lose commits that the writer of the
// time had already published: secondaries hold them. A writer that takes
// over afterwards never saw them, so its own next commits would reach the
// same serials with other records, and a secondary at such a serial
// would take it for current (it ignores the NOTIFY) and later apply an
// IXFR from it to records it does not hold. The follower-side checks
// (follow.go, the hints of restore.go) and the transfer server's check of
// secondaries ahead of the zone (xfr) catch a process or a secondary that
// is still ahead when they look; they cannot catch one the new writer has
// already caught up with by its own commits.
//
// So a writer opened with Options.TakeoverGap gives each zone, at its
// first serial, at least TakeoverGap more than the latest serial of any
// zone known when the Store opened (the backend's or, after OpenAfter,
// the ones this process served, and the floors of dropped zones), and
// than the time-based serial of that moment. The previous writer took
// its own gap the same way, and what it committed that survives is
// among the serials known now; so its lost commits' serials lie below
// the new gap's end unless more than TakeoverGap of them were lost, or
// the backend came back older than that writer's first commit. None of
// them is ever taken again, and the journal holds no diff from them, so
// a secondary at one of them is behind and is sent the whole zone.

package store

import "time"

// DefaultTakeoverGap is the TakeoverGap cnsd gives a writer on a shared
// backend: at one serial per commit, more commits than a Redis failover
// loses (writes acknowledged by a replica that was not promoted, within
// the seconds before the failover), and at one time-based step per ten
// seconds under three hours of clock.
const DefaultTakeoverGap Serial = 1000

// setTakeoverBaseLocked computes, for a writer with a TakeoverGap, the
// least first serial of every zone (takeoverBase): from the zones
// published and the floors kept now, when the Store is opened.
func (s *Store) setTakeoverBaseLocked(now time.Time) {
	gap := s.opts.TakeoverGap
	if gap == 0 || s.opts.Epoch == 0 {
		return
	}
	latest := TimeSerial(now)
	for _, f := range s.dropped {
		if latest.Less(f) {
			latest = f
		}
	}
	for _, snap := range *s.zones.Load() {
		if latest.Less(snap.serial) {
			latest = snap.serial
		}
	}
	s.takeoverBase = latest + gap
}

// nextSerialLocked is the serial a zone takes next when it is at base
// (its serial, or its floor when it comes back): NextSerial, but never
// below the first serial after a takeover.
func (s *Store) nextSerialLocked(base Serial, now time.Time) Serial {
	next := NextSerial(base, now)
	if floor := s.takeoverBase; floor != 0 && next.Less(floor) && uint32(floor-base) <= maxSerialStep {
		return floor
	}
	return next
}
