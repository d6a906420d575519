package bolt

import (
	"context"
	"fmt"
	"strings"

	"github.com/cnsd/cnsd/store"
	bbolt "go.etcd.io/bbolt"
)

// Acquire hands out the next epoch. The file lock already makes this
// process the only writer; the persisted epoch still grows across
// restarts so that fencing compares like with like.
func (b *Backend) Acquire(ctx context.Context) (uint64, error) {
	if err := ctx.Err(); err != nil {
		return 0, fmt.Errorf("store: acquire lease: %w", err)
	}
	var epoch uint64
	err := b.db.Update(func(tx *bbolt.Tx) error {
		meta := tx.Bucket(boltMetaKey)
		stored, err := boltStoredEpoch(meta)
		if err != nil {
			return err
		}
		epoch = stored + 1
		return boltPutUint64(meta, boltEpochKey, epoch)
	})
	if err != nil {
		return 0, fmt.Errorf("store: acquire lease in %s: %w", b.path, err)
	}
	return epoch, nil
}

// Keep waits for ctx to end: no other process can take the file.
func (b *Backend) Keep(ctx context.Context, epoch uint64) error {
	<-ctx.Done()
	return nil
}

// Release does nothing: closing the file releases it.
func (b *Backend) Release(ctx context.Context, epoch uint64) error { return nil }

// Changed returns a channel that receives a value after each Apply of this
// process (the only writer), coalesced; it is closed when ctx ends.
func (b *Backend) Changed(ctx context.Context) <-chan struct{} {
	ch := make(chan struct{}, 1)
	b.mu.Lock()
	b.watches[ch] = struct{}{}
	b.mu.Unlock()
	context.AfterFunc(ctx, func() {
		b.mu.Lock()
		defer b.mu.Unlock()
		delete(b.watches, ch)
		close(ch)
	})
	return ch
}

// notify signals every Changed channel without blocking.
func (b *Backend) notify() {
	b.mu.Lock()
	defer b.mu.Unlock()
	for ch := range b.watches {
		select {
		case ch <- struct{}{}:
		default:
		}
	}
}

// Since returns the diffs after since, an empty non-nil slice when since
// is the zone's serial, or the whole zone when the journal does not reach
// back to since or cannot be read.
func (b *Backend) Since(ctx context.Context, zone string, since store.Serial) ([]store.Diff, *store.ZoneData, error) {
	if err := ctx.Err(); err != nil {
		return nil, nil, fmt.Errorf("store: since zone %s: %w", zone, err)
	}
	var diffs []store.Diff
	var full *store.ZoneData
	err := b.db.View(func(tx *bbolt.Tx) error {
		zb := tx.Bucket([]byte(boltZonePrefix + zone))
		if zb == nil {
			return nil
		}
		serial, err := boltZoneSerial(zb)
		if err != nil {
			return err
		}
		if serial == since {
			diffs = []store.Diff{}
			return nil
		}
		diffs = boltChainSince(zone, zb, since, serial)
		if diffs == nil {
			full = boltReadZone(zone, zb, func(string, error) {})
		}
		return nil
	})
	if err != nil {
		return nil, nil, fmt.Errorf("store: since zone %s: %w", zone, err)
	}
	return diffs, full, nil
}

// boltChainSince returns the journal from since to serial when every
// entry decodes and they chain, else nil.
func boltChainSince(zone string, zb *bbolt.Bucket, since, serial store.Serial) []store.Diff {
	jb := zb.Bucket(boltJournalKey)
	start := boltSeekJournal(jb, since)
	if start == nil {
		return nil
	}
	bad := false
	diffs := boltReadJournal(zone, jb, start, func(string, error) { bad = true })
	if bad || len(diffs) == 0 {
		return nil
	}
	at := since
	for _, d := range diffs {
		if d.From != at {
			return nil
		}
		at = d.To
	}
	if at != serial {
		return nil
	}
	return diffs
}

// Zones lists the zones in the file.
func (b *Backend) Zones(ctx context.Context) ([]string, error) {
	var zones []string
	err := b.db.View(func(tx *bbolt.Tx) error {
		return tx.ForEach(func(name []byte, _ *bbolt.Bucket) error {
			if zone, ok := strings.CutPrefix(string(name), boltZonePrefix); ok {
				zones = append(zones, zone)
			}
			return ctx.Err()
		})
	})
	if err != nil {
		return nil, fmt.Errorf("store: list zones in %s: %w", b.path, err)
	}
	return zones, nil
}
