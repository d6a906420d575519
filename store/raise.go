package store

import (
	"context"
	"errors"
	"fmt"
)

// ErrNoZone: the zone asked for is not in the store.
var ErrNoZone = errors.New("store: no such zone")

// ErrHinted: RaiseSerial on a following Store has told the writer of the
// serial to pass (SerialHinter), which it does at its next Verify.
var ErrHinted = errors.New("store: this process does not write; the writer was told of the serial to pass")

// maxSerialStep is the largest increase RFC 1982 can order: a serial
// 2^31 or more ahead of another compares as not newer.
const maxSerialStep = 1<<31 - 1

// RaiseSerial moves zone's serial past above — a serial a secondary was
// seen serving although it is not behind the zone's — so that the
// secondary takes the zone again. It commits no record change: the new
// serial carries an empty diff, and a secondary that asks for an IXFR from
// a serial the journal never had gets the whole zone.
//
// The new serial is the later, in RFC 1982 order, of above+1 and what
// the next commit would take (NextSerial of the current serial): it jumps
// no further than needed. It is never more than 2^31-1 past the current
// serial, since secondaries could not order a larger step: when above+1
// is further, the serial moves by 2^31-1 and reached is false, and the
// caller raises again once the secondaries serve that serial (the two
// steps of RFC 1982 §7 and RFC 1912 §2.2). A zone whose serial is already
// past above is left alone (reached, its current serial).
//
// Only the writer raises serials: a following store tells the writer
// through a backend that takes hints (SerialHinter; the writer's Verify
// raises the zone past it) and returns ErrHinted, or returns ErrFollowing
// when the backend takes none; a zone the store does not hold gives
// ErrNoZone.
func (s *Store) RaiseSerial(ctx context.Context, zone string, above Serial) (serial Serial, reached bool, err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.following {
		return 0, false, s.askWriterLocked(ctx, zone, above)
	}
	if s.stale {
		if err := s.reloadLocked(ctx); err != nil {
			return 0, false, fmt.Errorf("raise serial of %s: load the zones again after an earlier failed commit: %w", zone, err)
		}
	}
	if _, err := s.confirmHeldLocked(ctx); err != nil {
		return 0, false, fmt.Errorf("raise serial of %s: %w", zone, err)
	}
	if err := s.restoreLostLocked(ctx); err != nil {
		return 0, false, fmt.Errorf("raise serial of %s: %w", zone, err)
	}
	return s.raiseLocked(ctx, zone, above)
}

// AskWriterToRaise is RaiseSerial for a Store that does not write,
// whether it follows yet or not: it never writes, only tells the writer
// (ErrHinted), or returns ErrFollowing when the backend takes no hints.
func (s *Store) AskWriterToRaise(ctx context.Context, zone string, above Serial) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.askWriterLocked(ctx, zone, above)
}

func (s *Store) askWriterLocked(ctx context.Context, zone string, above Serial) error {
	h, ok := s.b.(SerialHinter)
	if !ok {
		return ErrFollowing
	}
	if err := h.HintSerial(ctx, zone, above); err != nil {
		return fmt.Errorf("raise serial of %s above %d: tell the writer: %w", zone, above, err)
	}
	return ErrHinted
}

// raiseLocked is RaiseSerial after the held commit and the lost zones
// are dealt with.
func (s *Store) raiseLocked(ctx context.Context, zone string, above Serial) (serial Serial, reached bool, err error) {
	return s.raiseAboveLocked(ctx, zone, above, false)
}

// raiseAboveLocked is raiseLocked; strict raises a zone at above too.
func (s *Store) raiseAboveLocked(ctx context.Context, zone string, above Serial, strict bool) (serial Serial, reached bool, err error) {
	cur := (*s.zones.Load())[zone]
	if cur == nil {
		return 0, false, fmt.Errorf("raise serial of %s above %d: %w", zone, above, ErrNoZone)
	}
	if above.Less(cur.serial) || above == cur.serial && !strict {
		return cur.serial, true, nil
	}
	now := s.opts.Clock()
	next, reached := raiseTarget(cur.serial, above, s.nextSerialLocked(cur.serial, now))
	p := &zonePlan{zone: zone, cur: cur, set: map[string][]Record{}, ops: map[string][]op{}, raise: next}
	s.buildLocked(p, now)
	what := fmt.Sprintf("raise serial from %d to %d of", cur.serial, next)
	if err := s.writeLocked(ctx, []*zonePlan{p}, []ZoneChange{p.change}, what, nil, nil); err != nil {
		return 0, false, err
	}
	return next, reached, nil
}

// raisePastLocked is raiseLocked for a serial that must be passed even
// when the zone is at it: one a follower serves with other records.
func (s *Store) raisePastLocked(ctx context.Context, zone string, above Serial) (serial Serial, reached bool, err error) {
	return s.raiseAboveLocked(ctx, zone, above, true)
}

// raiseTarget is the serial RaiseSerial moves a zone at cur to for a
// secondary at above, when the next commit would take next, and whether
// it is past above.
func raiseTarget(cur, above, next Serial) (Serial, bool) {
	want := above + 1
	if want.Less(next) {
		want = next
	}
	if uint32(want-cur) <= maxSerialStep {
		return want, true
	}
	step := cur + maxSerialStep
	if step == above {
		// Landing on the secondary's serial would make it look current
		// while it holds other records.
		step--
	}
	return step, false
}
