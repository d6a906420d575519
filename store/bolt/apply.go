package bolt

import (
	"context"
	"encoding/binary"
	"fmt"
	"maps"
	"slices"

	"github.com/cnsd/cnsd/store"
	bbolt "go.etcd.io/bbolt"
)

// Apply writes all changes in one bbolt transaction: a conflict in any
// zone, or fencing, leaves every zone as it was.
func (b *Backend) Apply(ctx context.Context, epoch uint64, changes []store.ZoneChange) error {
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("store: apply: %w", err)
	}
	err := b.db.Update(func(tx *bbolt.Tx) error {
		if err := boltFence(tx, epoch); err != nil {
			return err
		}
		for i := range changes {
			if err := boltApplyZone(tx, epoch, &changes[i]); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return err
	}
	b.notify()
	return nil
}

// boltFence refuses an epoch older than the newest one stored and
// otherwise records epoch as the newest.
func boltFence(tx *bbolt.Tx, epoch uint64) error {
	meta := tx.Bucket(boltMetaKey)
	stored, err := boltStoredEpoch(meta)
	if err != nil {
		return err
	}
	if epoch < stored {
		return fmt.Errorf("store: apply with epoch %d after epoch %d: %w", epoch, stored, store.ErrFenced)
	}
	if epoch == stored {
		return nil
	}
	return boltPutUint64(meta, boltEpochKey, epoch)
}

func boltStoredEpoch(meta *bbolt.Bucket) (uint64, error) {
	v := meta.Get(boltEpochKey)
	if v == nil {
		return 0, nil
	}
	e, err := boltUint64(v)
	if err != nil {
		return 0, fmt.Errorf("store: meta/epoch: %w", err)
	}
	return e, nil
}

func boltApplyZone(tx *bbolt.Tx, epoch uint64, c *store.ZoneChange) error {
	if c.Zone == "" {
		return fmt.Errorf("store: apply: change without a zone name")
	}
	name := []byte(boltZonePrefix + c.Zone)
	zb := tx.Bucket(name)
	serial, err := boltZoneSerial(zb)
	if err != nil {
		return fmt.Errorf("store: apply zone %s: %w", c.Zone, err)
	}
	if serial != c.Prev {
		return fmt.Errorf("store: apply zone %s: stored serial %d, change starts from %d: %w",
			c.Zone, serial, c.Prev, store.ErrConflict)
	}
	if c.Drop {
		if zb == nil {
			return nil
		}
		if err := tx.DeleteBucket(name); err != nil {
			return fmt.Errorf("store: drop zone %s: %w", c.Zone, err)
		}
		return boltKeepFloor(tx, c.Zone, c.Prev)
	}
	if c.Replace && zb != nil {
		if err := tx.DeleteBucket(name); err != nil {
			return fmt.Errorf("store: replace zone %s: %w", c.Zone, err)
		}
	}
	if err := boltWriteZone(tx, name, epoch, c); err != nil {
		return fmt.Errorf("store: apply zone %s: %w", c.Zone, err)
	}
	return nil
}

// boltZoneSerial is the serial of a zone bucket; zero when it is nil.
func boltZoneSerial(zb *bbolt.Bucket) (store.Serial, error) {
	if zb == nil {
		return 0, nil
	}
	meta := zb.Bucket(boltMetaKey)
	if meta == nil {
		return 0, fmt.Errorf("meta bucket missing")
	}
	s, err := boltSerial(meta.Get(boltSerialKey))
	if err != nil {
		return 0, fmt.Errorf("meta/serial: %w", err)
	}
	return s, nil
}

func boltWriteZone(tx *bbolt.Tx, name []byte, epoch uint64, c *store.ZoneChange) error {
	zb, err := tx.CreateBucketIfNotExists(name)
	if err != nil {
		return err
	}
	var sub [3]*bbolt.Bucket
	for i, key := range [][]byte{boltMetaKey, boltVMsKey, boltJournalKey} {
		if sub[i], err = zb.CreateBucketIfNotExists(key); err != nil {
			return fmt.Errorf("%s: %w", key, err)
		}
	}
	meta, vms, journal := sub[0], sub[1], sub[2]
	if err := meta.Put(boltSerialKey, binary.BigEndian.AppendUint32(nil, uint32(c.Next))); err != nil {
		return err
	}
	if err := boltPutUint64(meta, boltEpochKey, epoch); err != nil {
		return err
	}
	if err := boltWriteVMs(vms, c); err != nil {
		return err
	}
	return boltAppendJournal(journal, c)
}

// boltBulk is the number of VMs set in one change from which the vms
// bucket's pages are filled up (a bootstrap) instead of split in halves.
const boltBulk = 1000

// boltBufSize is the size of the buffers boltWriteVMs cuts keys and
// values from.
const boltBufSize = 256 << 10

func boltWriteVMs(vms *bbolt.Bucket, c *store.ZoneChange) error {
	if len(c.SetVMs) >= boltBulk {
		vms.FillPercent = 0.9
	}
	// Sorted keys: bbolt inserts in order far faster than at random.
	// Keys and values are cut from shared buffers (bbolt keeps them, not
	// copies, until the transaction ends): a few allocations for a
	// bootstrap's 100k VMs, not two a VM.
	enc := store.NewVMRecordsEncoder(c.Zone)
	var buf []byte
	for _, vm := range slices.Sorted(maps.Keys(c.SetVMs)) {
		recs := c.SetVMs[vm]
		if need := len(vm) + 1 + len(recs)*24; cap(buf)-len(buf) < need {
			buf = make([]byte, 0, max(need, boltBufSize))
		}
		start := len(buf)
		buf = append(buf, vm...)
		mid := len(buf)
		buf = enc.Append(buf, recs)
		// Full slice expressions: the next append never writes into them.
		if err := vms.Put(buf[start:mid:mid], buf[mid:len(buf):len(buf)]); err != nil {
			return fmt.Errorf("vms/%s: %w", vm, err)
		}
	}
	for _, vm := range c.DelVMs {
		if err := vms.Delete([]byte(vm)); err != nil {
			return fmt.Errorf("vms/%s: %w", vm, err)
		}
	}
	return nil
}
