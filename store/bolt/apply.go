package bolt

import (
	"context"
	"encoding/binary"
	"fmt"

	"github.com/cnsd/cnsd/parallel"
	"github.com/cnsd/cnsd/store"
	bbolt "go.etcd.io/bbolt"
)

// Apply writes all changes in one bbolt transaction: a conflict in any
// zone, or fencing, leaves every zone as it was.
func (b *Backend) Apply(ctx context.Context, epoch uint64, changes []store.ZoneChange) error {
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("store: apply: %w", err)
	}
	encoded := boltEncodeBulk(changes)
	err := b.db.Update(func(tx *bbolt.Tx) error {
		if err := boltFence(tx, epoch); err != nil {
			return err
		}
		for i := range changes {
			if err := boltApplyZone(tx, epoch, &changes[i], encoded[i]); err != nil {
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

// boltApplyZone writes one zone's change; enc, when not nil, is its
// SetVMs encoded by boltEncodeBulk.
func boltApplyZone(tx *bbolt.Tx, epoch uint64, c *store.ZoneChange, enc *boltEncoded) error {
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
	if err := boltWriteZone(tx, name, epoch, c, enc); err != nil {
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

func boltWriteZone(tx *bbolt.Tx, name []byte, epoch uint64, c *store.ZoneChange, enc *boltEncoded) error {
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
	if err := boltWriteVMs(vms, c, enc); err != nil {
		return err
	}
	return boltAppendJournal(journal, c)
}

// boltBulk is the number of VMs set in one change from which the vms
// bucket's pages are filled up (a bootstrap) instead of split in halves,
// and from which the VMs are encoded before the transaction, in parallel
// (boltEncodeBulk).
const boltBulk = 1000

// VMs' keys and values are cut from buffers of boltBufMin bytes at
// first, each new one twice the last, up to boltBufSize: a zone of three
// VMs (a reverse zone, most of a bootstrap's zones) takes a few
// kilobytes, not a whole buffer of the size that suits 100k VMs.
const (
	boltBufMin  = 4 << 10
	boltBufSize = 256 << 10
)

// boltEncodeChunk is how many VMs one task of boltEncodeBulk encodes.
const boltEncodeChunk = 4096

// boltEncoded is one change's SetVMs ready to put: keys sorted (bbolt
// inserts in order far faster than at random), vals[i] the encoded
// records of keys[i].
type boltEncoded struct {
	keys, vals [][]byte
}

// boltEncodeBulk encodes the SetVMs of every change of at least boltBulk
// VMs, over all cores, before the write transaction: a bootstrap's
// encoding is most of its Apply, and the transaction, which has one
// writer, then only puts. The result has one entry per change, nil for
// the changes left to boltWriteVMs.
//
// Keys and values are cut from shared buffers (bbolt keeps them, not
// copies, until the transaction ends): a few allocations for a
// bootstrap's 100k VMs, not two a VM.
func boltEncodeBulk(changes []store.ZoneChange) []*boltEncoded {
	out := make([]*boltEncoded, len(changes))
	type chunk struct{ zone, from, to int }
	var bulk []int
	for i := range changes {
		if len(changes[i].SetVMs) >= boltBulk {
			bulk = append(bulk, i)
		}
	}
	if len(bulk) == 0 {
		return out
	}
	sorted, recs := make([][]string, len(changes)), make([][][]store.Record, len(changes))
	parallel.Each(len(bulk), 0, func(j int) {
		i := bulk[j]
		sorted[i], recs[i] = changes[i].SetSorted()
		n := len(sorted[i])
		out[i] = &boltEncoded{keys: make([][]byte, n), vals: make([][]byte, n)}
	})
	var chunks []chunk
	for _, i := range bulk {
		for from := 0; from < len(sorted[i]); from += boltEncodeChunk {
			chunks = append(chunks, chunk{zone: i, from: from, to: min(from+boltEncodeChunk, len(sorted[i]))})
		}
	}
	parallel.Each(len(chunks), 0, func(j int) {
		ch := chunks[j]
		c, enc, vms, recs := &changes[ch.zone], out[ch.zone], sorted[ch.zone], recs[ch.zone]
		recsEnc := store.NewVMRecordsEncoder(c.Zone)
		var buf []byte
		for k := ch.from; k < ch.to; k++ {
			enc.keys[k], enc.vals[k], buf = boltCutVM(buf, vms[k], recsEnc, recs[k])
		}
	})
	return out
}

// boltCutVM appends vm and the encoding of its records recs (by enc,
// the zone's encoder) to buf, a new buffer when buf lacks room, and returns the
// two as slices of their own (full slice expressions: a later append
// never writes into them) with the buffer to go on with.
func boltCutVM(buf []byte, vm string, enc store.VMRecordsEncoder, recs []store.Record) (key, val, rest []byte) {
	// need bounds what the encoding can take (store.VMRecordsBound): an
	// append past the buffer's end would copy the whole buffer to a new
	// one twice its size for one VM.
	if need := len(vm) + store.VMRecordsBound(recs); cap(buf)-len(buf) < need {
		buf = make([]byte, 0, max(need, min(2*cap(buf), boltBufSize), boltBufMin))
	}
	start := len(buf)
	buf = append(buf, vm...)
	mid := len(buf)
	buf = enc.Append(buf, recs)
	return buf[start:mid:mid], buf[mid:len(buf):len(buf)], buf
}

// boltWriteVMs writes the VMs c sets, encoded beforehand as enc when
// that is not nil, and deletes the ones it drops.
func boltWriteVMs(vms *bbolt.Bucket, c *store.ZoneChange, enc *boltEncoded) error {
	if len(c.SetVMs) >= boltBulk {
		vms.FillPercent = 0.9
	}
	if enc != nil {
		for i, key := range enc.keys {
			if err := vms.Put(key, enc.vals[i]); err != nil {
				return fmt.Errorf("vms/%s: %w", key, err)
			}
		}
	} else {
		recsEnc := store.NewVMRecordsEncoder(c.Zone)
		var buf, key, val []byte
		set, recs := c.SetSorted()
		for i, vm := range set {
			key, val, buf = boltCutVM(buf, vm, recsEnc, recs[i])
			if err := vms.Put(key, val); err != nil {
				return fmt.Errorf("vms/%s: %w", vm, err)
			}
		}
	}
	for _, vm := range c.DelVMs {
		if err := vms.Delete([]byte(vm)); err != nil {
			return fmt.Errorf("vms/%s: %w", vm, err)
		}
	}
	return nil
}
