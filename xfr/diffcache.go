package xfr

import (
	"sync"

	"github.com/cnsd/cnsd/store"
)

// diffCache keeps, per zone, the last difference IXFR sent: after a
// NOTIFY every secondary of a zone asks for the changes since the same
// serial, and building them (Snapshot.DiffSince decodes and condenses
// the journal entries) is most of an IXFR's CPU. One entry per zone, a
// difference smaller than the zone (else the zone goes whole), replaced
// by the next one asked for; the memory is at most one condensed
// journal span per zone.
type diffCache struct {
	mu sync.Mutex // guards m
	m  map[string]cachedDiff
}

// cachedDiff is the difference from one serial to another; the serials
// name the zone's versions (a zone made again continues above its
// floor), and holding them rather than the snapshot keeps no old
// snapshot alive.
type cachedDiff struct {
	to, from store.Serial
	diff     store.Diff // shared by the transfers that read it; never modified
}

// since returns snap.DiffSince(from), from the cache when the last
// request for the zone was the same.
func (c *diffCache) since(snap *store.Snapshot, from store.Serial) (store.Diff, error) {
	c.mu.Lock()
	e, ok := c.m[snap.Zone()]
	c.mu.Unlock()
	if ok && e.to == snap.Serial() && e.from == from {
		return e.diff, nil
	}
	d, err := snap.DiffSince(from)
	if err != nil || len(d.Removed)+len(d.Added) >= snap.Len() {
		return d, err
	}
	c.mu.Lock()
	if c.m == nil {
		c.m = map[string]cachedDiff{}
	}
	c.m[snap.Zone()] = cachedDiff{to: snap.Serial(), from: from, diff: d}
	c.mu.Unlock()
	return d, nil
}
