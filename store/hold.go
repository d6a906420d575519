// A commit written to the backend but not yet confirmed by a replica.

package store

import (
	"context"
	"errors"
	"fmt"
)

// heldCommit is a commit Apply wrote without a replica acknowledging it
// (ErrNotReplicated). It is neither installed nor published, so no
// secondary is told of its serials, until applying the same changes
// again succeeds. Planned changes build on it, so nothing else is
// committed meanwhile.
type heldCommit struct {
	plans   []*zonePlan
	changes []ZoneChange // with the commit's ID, so the backend knows them again
}

// holdLocked keeps the commit when err says only that no replica
// acknowledged it, logs it and reports true; otherwise it reports false.
func (s *Store) holdLocked(plans []*zonePlan, changes []ZoneChange, err error) bool {
	if !errors.Is(err, ErrNotReplicated) {
		return false
	}
	s.held = &heldCommit{plans: plans, changes: changes}
	s.log.Warn("commit written but not acknowledged by any replica; holding it back (not published, no NOTIFY) until one does",
		"zones", zoneList(changes), "err", err)
	return true
}

// confirmHeldLocked applies the held commit again, if there is one, and
// publishes it once that succeeds, returning its changes. It returns an
// error while no replica acknowledges it, or while the backend cannot be
// reached: the commit stays held. When the backend refuses it (the zones
// moved on: another writer, or a failover lost more than this commit),
// the commit is given up and the zones loaded again, as after any failed
// commit.
func (s *Store) confirmHeldLocked(ctx context.Context) ([]ZoneChange, error) {
	h := s.held
	if h == nil {
		return nil, nil
	}
	err := s.b.Apply(ctx, s.opts.Epoch, h.changes)
	switch {
	case err == nil:
	case errors.Is(err, ErrConflict), errors.Is(err, ErrFenced):
		s.held = nil
		return nil, s.afterFailedApplyLocked(ctx, fmt.Errorf("confirm held commit of zones %s: %w", zoneList(h.changes), err))
	default:
		return nil, fmt.Errorf("confirm held commit of zones %s: %w", zoneList(h.changes), err)
	}
	s.held = nil
	s.installLocked(h.plans, nil)
	s.log.Info("held commit acknowledged by a replica; published", "zones", zoneList(h.changes))
	// The plans' changes: those Apply wrote, with the diffs built
	// alongside the write (buildAllLocked).
	out := make([]ZoneChange, len(h.plans))
	for i, p := range h.plans {
		out[i] = p.change
	}
	return out, nil
}
