package store

import (
	"context"
	"errors"
	"maps"
	"slices"

	"github.com/cnsd/cnsd/zonegen"
)

// Record is one stored record; Source is the VM that contributed it.
type Record = zonegen.Record

// Diff is what one serial changed in one zone: the records removed and
// added going from serial From to serial To, each list sorted by
// Record.Compare. A condensed Diff spans several serials.
type Diff struct {
	Zone    string   `json:"zone"`
	From    Serial   `json:"from"`
	To      Serial   `json:"to"`
	Removed []Record `json:"removed,omitempty"`
	Added   []Record `json:"added,omitempty"`
}

// ZoneData is a zone as a backend keeps it: its serial, each VM's records
// in it, and the journal of the latest diffs, oldest first, the last one
// ending at Serial.
type ZoneData struct {
	Name    string
	Serial  Serial
	VMs     map[string][]Record // VM UUID → its records in this zone, sorted
	Journal []Diff
}

// ZoneChange is one commit's change to one zone, written atomically: the
// zone moves from serial Prev to serial Next (Prev is zero for a new zone),
// SetVMs replaces those VMs' records, DelVMs drops VMs that have no records
// left in the zone, Diff is appended to the journal, and the journal is
// trimmed to its newest KeepJournal entries. With KeepJournal 0 the
// Store may leave Diff's added records unlisted (a bootstrap's, larger
// than any journal keeps): a backend then has no use for them, and one
// that wants the encoding anyway gets it whole from EncodedDiff. Drop deletes the zone and
// everything under it (its final, empty serial has been published) and
// keeps Prev as the name's floor (Backend.Floors).
type ZoneChange struct {
	Zone        string
	Prev, Next  Serial
	SetVMs      map[string][]Record
	DelVMs      []string
	Diff        Diff
	KeepJournal int
	Drop        bool
	// Replace makes the change start from nothing: the zone's stored VMs
	// and journal are deleted before SetVMs are written and Diff becomes
	// the whole journal (DelVMs is not needed). The Store uses it to
	// write a zone back from what it serves when the backend is found
	// behind that (a failover or crash lost commits, restore.go).
	Replace bool
	// ID names the commit the change belongs to, the same for all its
	// zones; a backend that may write a change twice (a resend after a
	// lost reply, or a held commit confirmed later, see ErrNotReplicated)
	// recognises its own earlier write by it. Empty: the backend names
	// the commit itself.
	ID string
	// diffEnc, when set, is EncodeDiff of Diff (Zone set), made once by
	// the Store for its own journal and shared with the backend; never
	// modified.
	diffEnc []byte
	// addedLater, when set, holds the records Diff adds instead of
	// Diff.Added, which is then empty: a bootstrap's diff is listed only
	// if someone asks for it (diff, EncodedDiff), as the journal cannot
	// keep it (KeepJournal is then 0) and the Batcher only counts it.
	addedLater *bulkAdded
	// setOrder, when set, is every VM of SetVMs with its records, sorted
	// by VM: the plan's own deltas, which a bootstrap's batch gave in
	// that order (SetSorted).
	setOrder []vmDelta
}

// SetSorted returns the VMs SetVMs sets, sorted, and each one's records,
// in which order a backend writes them. When the Store's plan had them
// in that order (a bootstrap's batch, sorted by VM as the listing was),
// they come from it: no sort of 100k keys, and each VM's records are
// read where they lie next to the one before, not found through the map.
func (c *ZoneChange) SetSorted() (vms []string, recs [][]Record) {
	vms, recs = make([]string, 0, len(c.SetVMs)), make([][]Record, 0, len(c.SetVMs))
	if c.setOrder != nil {
		for _, d := range c.setOrder {
			vms, recs = append(vms, d.vm), append(recs, d.nw)
		}
		return vms, recs
	}
	vms = append(vms, slices.Sorted(maps.Keys(c.SetVMs))...)
	for _, vm := range vms {
		recs = append(recs, c.SetVMs[vm])
	}
	return vms, recs
}

// diff returns the change's Diff with every record it adds listed.
func (c *ZoneChange) diff() Diff {
	d := c.Diff
	if c.addedLater != nil {
		d.Added = c.addedLater.records()
	}
	return d
}

// counts returns how many records the change's Diff adds and removes,
// without listing those it leaves for later.
func (c *ZoneChange) counts() (added, removed int) {
	added = len(c.Diff.Added)
	if c.addedLater != nil {
		added = c.addedLater.count()
	}
	return added, len(c.Diff.Removed)
}

// EncodedDiff returns EncodeDiff of the change's Diff with Zone set, for
// a backend to write to its journal: the encoding the Store made for its
// own journal when there is one, so the diff is not encoded twice.
func (c *ZoneChange) EncodedDiff() []byte {
	if c.diffEnc != nil {
		return c.diffEnc
	}
	d := c.diff()
	d.Zone = c.Zone
	return EncodeDiff(d)
}

// Backend is where zones are kept between restarts: Redis (store/redis)
// or the embedded file (store/bolt). Implementations are safe for
// concurrent use.
type Backend interface {
	// Load reads every zone. A value that cannot be decoded is passed to
	// report with its key and skipped; it never fails the load.
	Load(ctx context.Context, report func(key string, err error)) (map[string]*ZoneData, error)
	// Apply writes changes, each zone atomically: either the whole
	// change of a zone is visible or none of it. A zone whose stored
	// serial is not Prev is left alone and ErrConflict returned; so is
	// every zone when the lease epoch is older than one a newer writer
	// has used (ErrFenced). Apply may keep the slices of changes (their
	// records, the Diff's lists); callers must not modify them
	// afterwards.
	Apply(ctx context.Context, epoch uint64, changes []ZoneChange) error
	// Floors returns the final serial of every zone name a Drop change
	// deleted, the latest drop's for a name dropped more than once: a
	// zone made again under that name continues above it (floor.go).
	// Apply keeps the floor with the drop, atomically.
	Floors(ctx context.Context) (map[string]Serial, error)
	// Close releases the backend.
	Close() error
}

// Errors of Backend.Apply and the Store.
var (
	// ErrConflict: the zone changed under the writer (its serial is not
	// the one the change starts from).
	ErrConflict = errors.New("store: zone serial changed by another writer")
	// ErrFenced: a writer holding a newer lease has written; this writer
	// lost its lease and must not commit.
	ErrFenced = errors.New("store: write fenced by a newer lease")
	// ErrNotReplicated: the backend wrote the changes but no replica
	// acknowledged them in time, so a failover to a replica could lose
	// them. The Store publishes nothing of such a commit and holds it
	// until Apply of the same changes (same ID) succeeds.
	ErrNotReplicated = errors.New("store: no replica acknowledged the write")
	// ErrNotDurable: Redis does not persist with an append-only file, or
	// refuses CONFIG GET so that cnsd cannot check, and the writer was
	// not told to accept the risk (redis.Options.AcceptNoAOF). With only
	// RDB snapshots a Redis crash loses the last minutes of commits,
	// serials go back and secondaries that saw them stop accepting the
	// zone.
	ErrNotDurable = errors.New("store: redis does not persist every write")
	// ErrNotCovered: the journal does not reach back to the serial asked
	// for; the caller must transfer the whole zone.
	ErrNotCovered = errors.New("store: journal does not cover serial")
)

// Leaser decides which one of several cnsd processes sharing a backend
// applies feed changes. Epochs grow with every new holder, and Apply
// refuses an epoch older than one already used (fencing).
type Leaser interface {
	// Acquire waits until this process holds the lease and returns its
	// epoch, larger than every earlier holder's.
	Acquire(ctx context.Context) (epoch uint64, err error)
	// Keep renews the lease until ctx ends (then it returns nil) or the
	// lease is lost to another process (then it returns ErrFenced).
	Keep(ctx context.Context, epoch uint64) error
	// Release gives the lease up so another process can take it at once.
	Release(ctx context.Context, epoch uint64) error
}

// Follower lets a process that does not write keep its view current with
// the commits of the process that does.
type Follower interface {
	// Changed returns a channel that receives a value after commits by
	// any process (coalesced: one value may stand for several commits).
	// The channel is closed when ctx ends.
	Changed(ctx context.Context) <-chan struct{}
	// Since returns the journal of zone after serial since, oldest
	// first; when the journal does not reach back that far it returns
	// the whole zone instead. A zone that no longer exists gives
	// (nil, nil, nil).
	Since(ctx context.Context, zone string, since Serial) ([]Diff, *ZoneData, error)
	// Zones lists the zones the backend holds.
	Zones(ctx context.Context) ([]string, error)
}
