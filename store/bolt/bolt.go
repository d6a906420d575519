// Package bolt is the embedded store.Backend: a single cnsd process that
// uses no Redis keeps its zones, serials, journals and serial floors in one
// bbolt file. It holds only that I/O; the contract and its conformance
// tests are the store package's (store.Backend, store/storetest).
//
// bolt may import store from this module, and nothing else of it.
package bolt

import (
	"encoding/binary"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/cnsd/cnsd/store"
	bbolt "go.etcd.io/bbolt"
	bolterrors "go.etcd.io/bbolt/errors"
)

// The embedded store is one bbolt file:
//
//	meta                      bucket
//	  epoch                   uint64 BE: the newest lease epoch handed out or written with
//	zone/<name>               bucket, one per zone
//	  meta                    bucket
//	    serial                uint32 BE: the zone's serial
//	    epoch                 uint64 BE: the epoch of the last write to the zone
//	  vms                     bucket
//	    <vm uuid>             store.EncodeVMRecords
//	  journal                 bucket
//	    <seq><chunk>          store.EncodeDiff in chunks (uint64 BE, uint32 BE), oldest first
//	floors                    bucket (floor.go)
//	  <name>                  uint32 BE: the final serial of the zone's last drop
//
// The journal sequence is the bucket's own (NextSequence), so it never
// repeats even after trimming; see journal.go for the chunks.
var (
	boltMetaKey    = []byte("meta")
	boltEpochKey   = []byte("epoch")
	boltSerialKey  = []byte("serial")
	boltVMsKey     = []byte("vms")
	boltJournalKey = []byte("journal")
)

// boltZonePrefix starts the name of every zone's bucket.
const boltZonePrefix = "zone/"

// DefaultLockTimeout is how long Open waits for another process
// to let go of the file when Options.LockTimeout is zero.
const DefaultLockTimeout = time.Second

// DefaultMmapSize is Options.MmapSize when that is zero: room for
// a few million records without remapping.
const DefaultMmapSize = 1 << 30

// Options configure Open.
type Options struct {
	// LockTimeout bounds the wait for the file lock held by another
	// process; zero means DefaultLockTimeout.
	LockTimeout time.Duration
	// MmapSize is the address space mapped for the file up front;
	// zero means DefaultMmapSize. bbolt copies every page a commit
	// touched each time it has to grow the mapping, so a bootstrap into a
	// small mapping is many times slower. It does not grow the file.
	MmapSize int
	// NoSync skips fsync after each commit: for tests and benchmarks
	// only, a crash can lose or corrupt the file.
	NoSync bool
}

// Backend is the embedded store.Backend: one bbolt file used by a single
// process. bbolt's exclusive file lock makes that process the only writer,
// so the lease is always held (store.Leaser) and every commit is local
// (store.Follower).
type Backend struct {
	db   *bbolt.DB
	path string

	mu      sync.Mutex                 // guards watches
	watches map[chan struct{}]struct{} // Changed channels, closed when their ctx ends
}

var (
	_ store.Backend  = (*Backend)(nil)
	_ store.Leaser   = (*Backend)(nil)
	_ store.Follower = (*Backend)(nil)
)

// Open opens or creates the store file at path. It fails with an error
// naming path when another process holds the file past opts.LockTimeout.
func Open(path string, opts Options) (*Backend, error) {
	timeout := opts.LockTimeout
	if timeout <= 0 {
		timeout = DefaultLockTimeout
	}
	mmap := opts.MmapSize
	if mmap <= 0 {
		mmap = DefaultMmapSize
	}
	db, err := bbolt.Open(path, 0o600, &bbolt.Options{Timeout: timeout, NoSync: opts.NoSync,
		InitialMmapSize: mmap, FreelistType: bbolt.FreelistMapType})
	if errors.Is(err, bolterrors.ErrTimeout) {
		return nil, fmt.Errorf("store: %s is in use by another process: %w", path, err)
	}
	if err != nil {
		return nil, fmt.Errorf("store: open %s: %w", path, err)
	}
	err = db.Update(func(tx *bbolt.Tx) error {
		_, err := tx.CreateBucketIfNotExists(boltMetaKey)
		return err
	})
	if err != nil {
		db.Close()
		return nil, fmt.Errorf("store: init %s: %w", path, err)
	}
	return &Backend{db: db, path: path, watches: map[chan struct{}]struct{}{}}, nil
}

// Close closes the file, releasing its lock.
func (b *Backend) Close() error {
	if err := b.db.Close(); err != nil {
		return fmt.Errorf("store: close %s: %w", b.path, err)
	}
	return nil
}

func boltUint64(v []byte) (uint64, error) {
	if len(v) != 8 {
		return 0, fmt.Errorf("%d bytes, want 8", len(v))
	}
	return binary.BigEndian.Uint64(v), nil
}

func boltSerial(v []byte) (store.Serial, error) {
	if len(v) != 4 {
		return 0, fmt.Errorf("%d bytes, want 4", len(v))
	}
	return store.Serial(binary.BigEndian.Uint32(v)), nil
}

func boltPutUint64(b *bbolt.Bucket, key []byte, v uint64) error {
	return b.Put(key, binary.BigEndian.AppendUint64(nil, v))
}
