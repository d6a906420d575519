package redis

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"strconv"
	"time"

	"github.com/cnsd/cnsd/store"
	goredis "github.com/redis/go-redis/v9"
)

// subscribeTimeout bounds how long Changed waits for SUBSCRIBE to be
// confirmed before returning; the poll covers a slower subscription.
const subscribeTimeout = 2 * time.Second

// Changed signals after commit announcements on cnsd:commits, and after
// any zone's serial changed between two polls (a message can be lost
// while the subscription reconnects). The subscription is in place when
// Changed returns, unless Redis is unreachable.
func (r *Backend) Changed(ctx context.Context) <-chan struct{} {
	ch := make(chan struct{}, 1)
	ps := r.c.Subscribe(ctx, redisCommitsCh)
	sctx, cancel := context.WithTimeout(ctx, subscribeTimeout)
	_, _ = ps.Receive(sctx) // the confirmation; on error go-redis resubscribes
	cancel()
	last, _ := r.serials(ctx)
	go r.watch(ctx, ps, last, ch)
	return ch
}

func (r *Backend) watch(ctx context.Context, ps *goredis.PubSub, last map[string]string, ch chan struct{}) {
	defer close(ch)
	defer ps.Close()
	msgs := ps.Channel()
	t := time.NewTicker(r.opts.PollInterval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-msgs:
			notify(ch)
		case <-t.C:
			now, err := r.serials(ctx)
			if err == nil && !maps.Equal(now, last) {
				last = now
				notify(ch)
			}
		}
	}
}

// notify sends without blocking: a pending value already says "changed".
func notify(ch chan struct{}) {
	select {
	case ch <- struct{}{}:
	default:
	}
}

// Since returns the journal entries after since when they reach back to
// it, else the whole zone; (nil, nil, nil) when the zone does not exist.
func (r *Backend) Since(ctx context.Context, zone string, since store.Serial) ([]store.Diff, *store.ZoneData, error) {
	k := zoneKeys(zone)
	var serial *goredis.StringCmd
	var journal *goredis.StringSliceCmd
	_, err := r.c.TxPipelined(ctx, func(p goredis.Pipeliner) error {
		serial = p.Get(ctx, k.serial)
		journal = p.LRange(ctx, k.journal, 0, -1)
		return nil
	})
	if errors.Is(serial.Err(), goredis.Nil) {
		return nil, nil, nil
	}
	if err != nil {
		return nil, nil, fmt.Errorf("store: redis read journal of zone %s: %w", zone, err)
	}
	s, err := strconv.ParseUint(serial.Val(), 10, 32)
	if err != nil {
		return nil, nil, fmt.Errorf("store: redis key %s: serial %q: %w", k.serial, serial.Val(), err)
	}
	if store.Serial(s) == since {
		return []store.Diff{}, nil, nil
	}
	diffs := decodeJournal(zone, k.journal, store.Serial(s), journal.Val(), func(string, error) {})
	for i, d := range diffs {
		if d.From == since {
			return diffs[i:], nil, nil
		}
	}
	zd, err := r.readZone(ctx, zone, func(string, error) {})
	return nil, zd, err
}
