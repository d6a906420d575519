package store

import (
	"context"
	"io"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/cnsd/cnsd/zonegen"
)

// Retry back-off of a Batcher whose commit failed.
const (
	minBackoff = 100 * time.Millisecond
	maxBackoff = 10 * time.Second
)

// Batcher coalesces contributions into commits so that a burst of feed
// changes becomes few serials. With a window of zero (the default of the
// configuration) a change that arrives while no commit is under way is
// committed at once, and the changes that arrive during a commit are
// committed together by the next one: an isolated change is not kept
// waiting for company that never comes, and a burst still coalesces. With
// a window, it commits when no change arrived for the window, or when the
// oldest pending change has waited maxDelay, whichever comes first. A
// failed commit keeps its contributions (newer ones for the same VM win)
// and is retried with back-off: nothing is dropped.
type Batcher struct {
	s        *Store
	window   time.Duration
	maxDelay time.Duration
	log      *slog.Logger
	now      func() time.Time
	kick     chan struct{} // capacity 1: something was added
	commits  atomic.Int64  // commits that succeeded
	describe atomic.Pointer[func(vm string) []any]

	// commitMu is held from taking the pending contributions until they
	// are committed or put back, so that an older batch can never be
	// committed after a newer one (Run and Flush race otherwise).
	commitMu sync.Mutex

	// mu guards pending, inflight, first and last.
	mu       sync.Mutex
	pending  map[string]zonegen.Contribution // VM → its latest contribution
	inflight int                             // VMs taken by a commit that has not returned
	first    time.Time                       // when the oldest pending one arrived
	last     time.Time                       // when the newest one arrived
}

// NewBatcher returns a Batcher committing to s. A window of zero commits
// at once when no commit is under way (see Batcher); a maxDelay of zero
// takes the default, 200 ms.
func NewBatcher(s *Store, window, maxDelay time.Duration, log *slog.Logger) *Batcher {
	window = max(window, 0)
	if maxDelay <= 0 {
		maxDelay = 200 * time.Millisecond
	}
	if log == nil {
		log = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	return &Batcher{s: s, window: window, maxDelay: maxDelay, log: log.With("component", "batcher"),
		now: time.Now, kick: make(chan struct{}, 1), pending: map[string]zonegen.Contribution{}}
}

// Add queues c; it replaces any pending contribution of the same VM.
// An Unresolved contribution is ignored: the VM keeps what it had,
// including a pending contribution. It never blocks.
func (b *Batcher) Add(c zonegen.Contribution) {
	if c.Unresolved {
		return
	}
	b.mu.Lock()
	now := b.now()
	if len(b.pending) == 0 {
		b.first = now
	}
	b.pending[c.VM], b.last = c, now
	b.mu.Unlock()
	select {
	case b.kick <- struct{}{}:
	default:
	}
}

// AddAll queues every contribution of cs under one lock, so that a
// complete listing is taken by one commit: one serial, not one per
// maxDelay. Unresolved contributions are ignored, as by Add.
func (b *Batcher) AddAll(cs []zonegen.Contribution) {
	b.mu.Lock()
	now, added := b.now(), false
	if len(b.pending) == 0 && len(cs) > 1024 {
		// A listing's: sized at once rather than grown step by step.
		b.pending = make(map[string]zonegen.Contribution, len(cs))
	}
	for _, c := range cs {
		if c.Unresolved {
			continue
		}
		if len(b.pending) == 0 {
			b.first = now
		}
		b.pending[c.VM], added = c, true
	}
	if added {
		b.last = now
	}
	b.mu.Unlock()
	if added {
		select {
		case b.kick <- struct{}{}:
		default:
		}
	}
}

// Latest returns the contribution of vm that waits to be committed, if
// any: what vm's records will be once the Batcher commits.
func (b *Batcher) Latest(vm string) (zonegen.Contribution, bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	c, ok := b.pending[vm]
	return c, ok
}

// Commits returns how many commits the Batcher made.
func (b *Batcher) Commits() int64 { return b.commits.Load() }

// Pending returns how many VMs wait to be committed, counting those of a
// commit under way.
func (b *Batcher) Pending() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return len(b.pending) + b.inflight
}

// Flush commits everything pending now, as one commit (the bootstrap:
// one serial). On error the contributions stay pending.
func (b *Batcher) Flush(ctx context.Context) error {
	return b.commitDue(ctx)
}

// take empties pending and returns it sorted by VM; the sort is done
// once the lock is let go, so that Add does not wait for a listing's.
func (b *Batcher) take() []zonegen.Contribution {
	b.mu.Lock()
	batch := make([]zonegen.Contribution, 0, len(b.pending))
	for _, c := range b.pending {
		batch = append(batch, c)
	}
	clear(b.pending)
	b.inflight = len(batch)
	b.mu.Unlock()
	return sortByVM(batch)
}

// sortByVM returns batch sorted by VM. A listing's 100k are sorted by
// their UUIDs' bytes eight at a time (sortKeyed) and then moved once:
// comparing the strings, each elsewhere on the heap, took 0.18 s of a
// bootstrap's time before its commit.
func sortByVM(batch []zonegen.Contribution) []zonegen.Contribution {
	if len(batch) < 1024 {
		slices.SortFunc(batch, func(x, y zonegen.Contribution) int { return strings.Compare(x.VM, y.VM) })
		return batch
	}
	ks := make([]keyed, len(batch))
	for i, c := range batch {
		ks[i] = keyed{s: c.VM, i: int32(i)}
	}
	sortKeyed(ks)
	out := make([]zonegen.Contribution, len(batch))
	for k, key := range ks {
		out[k] = batch[key.i]
	}
	return out
}

// putBack returns a failed batch to pending, except for VMs that got a
// newer contribution meanwhile.
func (b *Batcher) putBack(batch []zonegen.Contribution) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if len(b.pending) == 0 {
		b.first, b.last = b.now(), b.now()
	}
	for _, c := range batch {
		if _, newer := b.pending[c.VM]; !newer {
			b.pending[c.VM] = c
		}
	}
}

// due returns how long to wait before committing, and whether anything
// is pending.
func (b *Batcher) due() (time.Duration, bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if len(b.pending) == 0 {
		return 0, false
	}
	now := b.now()
	return min(b.last.Add(b.window).Sub(now), b.first.Add(b.maxDelay).Sub(now)), true
}
