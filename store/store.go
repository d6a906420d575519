package store

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"slices"
	"sync"
	"sync/atomic"
	"time"
)

// Options tune a Store. Zero values take the defaults.
type Options struct {
	// Clock gives the time serials are derived from (time.Now).
	Clock func() time.Time
	// JournalEntries bounds each zone's journal by count (100).
	JournalEntries int
	// JournalBytes bounds each zone's journal by approximate size (16 MiB).
	JournalBytes int
	// Epoch is the lease epoch the caller holds; every Apply carries it.
	Epoch uint64
	// Retain, when set, gives the oldest serial of a zone that a
	// secondary still serves (xfr.Server.OldestConfirmed): the journal
	// keeps the diffs from it on, up to four times its limits, so that
	// the secondary can catch up by IXFR.
	Retain func(zone string) (uint32, bool)
	// RRsetWarn is the largest RRset a zone may have before the Store
	// logs a warning, once per zone each time it is crossed
	// (DefaultRRsetWarn, BIND's max-records-per-type default); negative
	// turns the warning off.
	RRsetWarn int
	// MaxMembers caps the VMs whose records one name publishes (0: no
	// cap): a name with more publishes those of the MaxMembers with the
	// lowest rank of VM UUID and name (members.go), a choice that is
	// the same in every process and does not churn. Readers must have the
	// writer's value.
	MaxMembers int
	// TakeoverGap, for a writer on a backend that a failover can set
	// back (Redis), is how far past the serials known when the Store
	// opens each zone's first serial goes, so that none a lost commit
	// took is reused with other records (takeover.go); 0: none.
	TakeoverGap Serial
}

// ErrFollowing: Commit was called on a Store that has followed another
// writer; its per-VM state is not maintained by journal diffs, so it must
// be opened again before it may write.
var ErrFollowing = errors.New("store: a following store cannot commit; open it again to write")

// Store is cnsd's zones in memory over a Backend: per zone the served
// records as an immutable Snapshot, the serial and the journal, plus each
// VM's records so that a new contribution becomes a diff. One writer
// commits; readers take Snapshots without locks.
type Store struct {
	b    Backend
	opts Options
	log  *slog.Logger

	// mu serialises commits and follow steps for their whole duration,
	// backend I/O included, and guards vms, vmZones, dropped, kept,
	// following, stale and held. Readers never take it: they load zones.
	mu        sync.Mutex
	vms       map[string]map[string][]Record // zone → VM → its records there, sorted
	vmZones   map[string][]string            // VM → zones it has records in, sorted
	dropped   map[string]Serial              // zone → final serial of its last drop (floor.go)
	kept      map[string]bool                // zones never dropped when empty (Keep)
	following bool
	// stale: a commit failed and loading the zones again after it did
	// too, so the Store may be behind the backend (see Commit).
	stale bool
	// held is a commit written but not acknowledged by a replica, not
	// published yet (hold.go); nil when none.
	held *heldCommit
	// lost holds the zones the backend was found behind the published
	// state in, to be written back (restore.go).
	lost map[string]lostZone
	// unconfirmed are the zones a following Store serves from before it
	// followed (OpenAfter: what this process published, or served, that
	// the backend had lost): the backend may reach their serials with
	// other records, written by a writer that never saw them. They are
	// taken whole from the backend, not by its journal, once it is at
	// or past them with the same records or a later serial (follow.go).
	unconfirmed map[string]bool
	// vanished holds when a following Store first found each zone it
	// serves gone from the backend without a drop (follow.go).
	vanished map[string]time.Time
	// overRRset holds the zones whose largest RRset is past
	// opts.RRsetWarn, so that each crossing is logged once.
	overRRset map[string]bool
	// restored counts the zones written back (ZonesRestored).
	restored atomic.Int64
	// takeoverBase is the least first serial of every zone under a
	// writer with a TakeoverGap (takeover.go); 0: no gap.
	takeoverBase Serial

	// zones is the published map zone → Snapshot. It is replaced whole,
	// never modified, so one commit's zones switch together.
	zones atomic.Pointer[map[string]*Snapshot]

	// lastCommit is how the last Commit ended (CommitError).
	lastCommit atomic.Pointer[commitOutcome]
	// released: memory was given back after a large build (release.go).
	released atomic.Bool

	// watchMu guards watchers.
	watchMu  sync.Mutex
	watchers []chan struct{}
}

// Open loads every zone from b and returns a Store serving them. Values
// the backend cannot decode are logged with their key and skipped.
func Open(ctx context.Context, b Backend, opts Options, log *slog.Logger) (*Store, error) {
	if log == nil {
		log = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	log = log.With("component", "store")
	if opts.Clock == nil {
		opts.Clock = time.Now
	}
	if opts.JournalEntries <= 0 {
		opts.JournalEntries = 100
	}
	if opts.JournalBytes <= 0 {
		opts.JournalBytes = 16 << 20
	}
	if opts.RRsetWarn == 0 {
		opts.RRsetWarn = DefaultRRsetWarn
	}
	bootHeadroom()
	s := &Store{b: b, opts: opts, log: log, vms: map[string]map[string][]Record{},
		vmZones: map[string][]string{}, dropped: map[string]Serial{}, lost: map[string]lostZone{}, unconfirmed: map[string]bool{}, vanished: map[string]time.Time{}, overRRset: map[string]bool{}}
	data, err := b.Load(ctx, func(key string, err error) {
		log.Warn("skipping a value that cannot be decoded", "key", key, "err", err)
	})
	if err != nil {
		return nil, fmt.Errorf("open store: %w", err)
	}
	if err := s.loadFloorsLocked(ctx); err != nil {
		return nil, fmt.Errorf("open store: %w", err)
	}
	zones := map[string]*Snapshot{}
	loaded := 0
	for name, zd := range data {
		zones[name] = s.loadZoneLocked(name, zd)
		loaded += zones[name].Len()
	}
	s.checkRRsetsLocked(zones)
	s.zones.Store(&zones)
	s.setTakeoverBaseLocked(opts.Clock())
	s.releaseAfterBuild(loaded)
	return s, nil
}

// Snapshot returns the current snapshot of zone, or nil if there is none.
func (s *Store) Snapshot(zone string) *Snapshot {
	return (*s.zones.Load())[zone]
}

// Zones lists the zones that have a snapshot, sorted. A zone that just
// went empty is listed (with no records) until it is dropped.
func (s *Store) Zones() []string {
	return slices.Sorted(maps.Keys(*s.zones.Load()))
}

// DiffSince returns the condensed diff of zone from serial from to its
// current serial; see Snapshot.DiffSince. A zone that does not exist
// gives ErrNotCovered.
func (s *Store) DiffSince(zone string, from Serial) (Diff, error) {
	snap := s.Snapshot(zone)
	if snap == nil {
		return Diff{}, fmt.Errorf("diff of %s since %d: no such zone: %w", zone, from, ErrNotCovered)
	}
	return snap.DiffSince(from)
}

// Watch returns a new channel that receives a value after zones change
// (coalesced: capacity 1, one value may stand for several commits). Each
// call adds a subscriber for the Store's lifetime or until Unwatch; call
// it once per consumer.
func (s *Store) Watch() <-chan struct{} {
	ch := make(chan struct{}, 1)
	s.watchMu.Lock()
	s.watchers = append(s.watchers, ch)
	s.watchMu.Unlock()
	return ch
}

// Unwatch removes a channel Watch returned. The channel is not closed.
func (s *Store) Unwatch(ch <-chan struct{}) {
	s.watchMu.Lock()
	defer s.watchMu.Unlock()
	s.watchers = slices.DeleteFunc(s.watchers, func(c chan struct{}) bool { return c == ch })
}

func (s *Store) notify() {
	s.watchMu.Lock()
	defer s.watchMu.Unlock()
	for _, ch := range s.watchers {
		select {
		case ch <- struct{}{}:
		default:
		}
	}
}

// publishLocked replaces the published snapshots of the zones in set
// (a nil Snapshot removes the zone) with one atomic swap, and signals the
// watchers.
func (s *Store) publishLocked(set map[string]*Snapshot) {
	zones := maps.Clone(*s.zones.Load())
	for name, snap := range set {
		if snap == nil {
			delete(zones, name)
		} else {
			zones[name] = snap
		}
	}
	s.checkRRsetsLocked(set)
	s.zones.Store(&zones)
	s.notify()
}
