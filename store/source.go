package store

import (
	"context"
	"maps"
	"slices"

	"github.com/cnsd/cnsd/zonegen"
)

// CommitSource replaces everything source contributed with zones (zone →
// records, names absolute and lower-case), in one commit: the way records
// that do not come from a VM — the catalog zone's, say — are written.
// Zones left out lose source's records. source must not be a VM UUID.
func (s *Store) CommitSource(ctx context.Context, source string, zones map[string][]Record) ([]Diff, error) {
	c := zonegen.Contribution{VM: source}
	for _, zone := range slices.Sorted(maps.Keys(zones)) {
		if len(zones[zone]) > 0 {
			c.Zones = append(c.Zones, zonegen.ZoneRecords{Zone: zone, Records: zones[zone]})
		}
	}
	return s.Commit(ctx, []zonegen.Contribution{c})
}
