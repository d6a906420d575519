package store

import (
	"context"
	"fmt"
)

// Serial floors. A zone left with no records is dropped: its snapshot,
// VMs and journal are deleted. Its name may come back (a reverse zone
// whose network gets a VM again), and secondaries may still hold the
// dropped zone at its final serial, so the new zone must start above it
// or they ignore it for good. Backend.Apply therefore keeps the final
// serial of every Drop as the name's floor, in the same atomic write as
// the drop, and Open (and a reload after a failed commit) reads the
// floors back: a zone made again continues after its floor, across
// restarts and writer takeovers alike.
//
// A floor is a name and a serial, a few dozen bytes, kept for every zone
// name ever dropped and overwritten by its next drop; it is never deleted,
// since a secondary may hold a dropped zone for as long as its SOA expire
// timer (a week by default) and beyond.

// loadFloorsLocked takes the backend's floors into s.dropped. A floor
// never lowers what s.dropped holds for a name: after a reload the
// in-memory value may be the later one.
func (s *Store) loadFloorsLocked(ctx context.Context) error {
	floors, err := s.b.Floors(ctx)
	if err != nil {
		return fmt.Errorf("load serial floors: %w", err)
	}
	for zone, f := range floors {
		s.keepFloorLocked(zone, f)
	}
	return nil
}

// keepFloorLocked makes serial the floor of zone unless a later one is
// known already.
func (s *Store) keepFloorLocked(zone string, serial Serial) {
	if cur, ok := s.dropped[zone]; !ok || cur.Less(serial) {
		s.dropped[zone] = serial
	}
}
