package store

// Seeded floors. A new store (moving from the embedded store to Redis, or
// a lost file) starts every zone at the time-based serial, which may be
// below what the secondaries hold from the old one: they would ignore
// cnsd until its serials pass theirs. So before the first commit, the
// writer asks the secondaries for their serials (xfr.Server.PeerSerials)
// and seeds them as floors: a zone made then continues above its floor
// (NextSerial: the later of floor+1 and the time-based serial, so within
// one RFC 1982 step of what the secondary holds), as a zone that was
// dropped does (floor.go). A seeded floor is kept in memory only: once
// the zone exists its serial carries on from itself.

// Fresh reports whether the store holds nothing: no zone and no floor.
// Only then do the secondaries' serials need asking for.
func (s *Store) Fresh() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(*s.zones.Load()) == 0 && len(s.dropped) == 0
}

// SeedFloors makes each serial in floors the floor of its zone (absolute,
// lower-case name), so that the zone, when made, starts above it. A zone
// the store holds is left alone, and so is one whose floor is later
// already. It returns the floors taken.
func (s *Store) SeedFloors(floors map[string]Serial) map[string]Serial {
	s.mu.Lock()
	defer s.mu.Unlock()
	taken := map[string]Serial{}
	zones := *s.zones.Load()
	for zone, serial := range floors {
		if zones[zone] != nil {
			continue
		}
		if cur, ok := s.dropped[zone]; ok && !cur.Less(serial) {
			continue
		}
		s.dropped[zone] = serial
		taken[zone] = serial
	}
	return taken
}
