package store

import (
	"maps"
	"slices"

	"github.com/cnsd/cnsd/zonegen"
)

// Sources lists, sorted, every source that has records in some zone: the
// VMs and the names given to CommitSource. The pipeline compares it with a
// complete VM listing to find the VMs that are gone.
func (s *Store) Sources() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Sorted(maps.Keys(s.vmZones))
}

// Contribution returns what source contributed at the last commit, per
// zone in zone order: what a new contribution of source will replace. The
// record slices are shared with the Store and must not be modified.
func (s *Store) Contribution(source string) zonegen.Contribution {
	s.mu.Lock()
	defer s.mu.Unlock()
	c := zonegen.Contribution{VM: source}
	for _, zone := range s.vmZones[source] {
		c.Zones = append(c.Zones, zonegen.ZoneRecords{Zone: zone, Records: s.vms[zone][source]})
	}
	return c
}
