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

// NewRecord builds a Record from a DNS type number, for packages that
// write records without zonegen (the catalog zone's, say).
func NewRecord(name string, rrtype uint16, data, source string) Record {
	return Record{Name: name, Type: zonegen.Type(rrtype), Data: data, Source: source}
}
