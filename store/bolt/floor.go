package bolt

import (
	"context"
	"encoding/binary"
	"fmt"

	"github.com/cnsd/cnsd/store"
	bbolt "go.etcd.io/bbolt"
)

// boltFloorsKey is the top-level bucket of serial floors (store's floor.go):
// zone name → uint32 BE, the final serial of its last drop.
var boltFloorsKey = []byte("floors")

// boltKeepFloor records serial as the floor of zone, in the transaction
// that drops it.
func boltKeepFloor(tx *bbolt.Tx, zone string, serial store.Serial) error {
	fb, err := tx.CreateBucketIfNotExists(boltFloorsKey)
	if err != nil {
		return fmt.Errorf("store: floor of zone %s: %w", zone, err)
	}
	if err := fb.Put([]byte(zone), binary.BigEndian.AppendUint32(nil, uint32(serial))); err != nil {
		return fmt.Errorf("store: floor of zone %s: %w", zone, err)
	}
	return nil
}

// Floors reads every zone's floor. A value that is not a serial fails
// the read with its key: silently skipping it could let a zone go back.
func (b *Backend) Floors(ctx context.Context) (map[string]store.Serial, error) {
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("store: floors: %w", err)
	}
	floors := map[string]store.Serial{}
	err := b.db.View(func(tx *bbolt.Tx) error {
		fb := tx.Bucket(boltFloorsKey)
		if fb == nil {
			return nil
		}
		return fb.ForEach(func(k, v []byte) error {
			s, err := boltSerial(v)
			if err != nil {
				return fmt.Errorf("floors/%s: %w", k, err)
			}
			floors[string(k)] = s
			return nil
		})
	})
	if err != nil {
		return nil, fmt.Errorf("store: floors in %s: %w", b.path, err)
	}
	return floors, nil
}
