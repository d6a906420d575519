package store

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
)

// Keep makes zones permanent: each one that does not exist is created
// empty, at a first serial, in one commit, and from then on a kept zone
// that loses its last record stays published (empty, at its new serial)
// instead of being dropped. Configured forward zones need this: a zone
// without a snapshot has no serial, so no SOA to serve or transfer.
//
// Each call replaces the kept set: zones left out return to the normal
// rule and are dropped at once when they are empty. Names are absolute
// and lower-case; a missing trailing dot is added.
//
// The kept set lives in memory only. A kept empty zone stays in the
// backend and loads back with Open, but Commit drops empty zones that are
// not kept, so the writer calls Keep after Open and before its first
// Commit. Like Commit, only the process holding the lease calls it; a
// Store that has followed another writer returns ErrFollowing.
func (s *Store) Keep(ctx context.Context, zones []string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.following {
		return ErrFollowing
	}
	kept := make(map[string]bool, len(zones))
	for _, z := range zones {
		kept[absolute(z)] = true
	}
	s.kept = kept
	if s.stale {
		if err := s.reloadLocked(ctx); err != nil {
			return fmt.Errorf("keep: load the zones again after an earlier failed commit: %w", err)
		}
	}
	if _, err := s.confirmHeldLocked(ctx); err != nil {
		return fmt.Errorf("keep: %w", err)
	}
	cur := *s.zones.Load()
	var plans []*zonePlan
	for _, zone := range slices.Sorted(maps.Keys(kept)) {
		if cur[zone] == nil {
			plans = append(plans, &zonePlan{zone: zone, set: map[string][]Record{}, ops: map[string][]op{}})
		}
	}
	if len(plans) > 0 {
		now := s.opts.Clock()
		changes := make([]ZoneChange, len(plans))
		for i, p := range plans {
			s.buildLocked(p, now)
			changes[i] = p.change
		}
		if err := s.writeLocked(ctx, plans, changes, "create kept zones", nil, nil); err != nil {
			return err
		}
	}
	s.dropEmptyLocked(ctx)
	return nil
}

// absolute returns zone lower-case with its trailing dot.
func absolute(zone string) string {
	zone = strings.ToLower(zone)
	if !strings.HasSuffix(zone, ".") {
		zone += "."
	}
	return zone
}
