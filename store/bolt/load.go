package bolt

import (
	"context"
	"fmt"
	"strings"

	"github.com/cnsd/cnsd/store"
	bbolt "go.etcd.io/bbolt"
)

// Load reads every zone in one read transaction, so it sees one commit.
func (b *Backend) Load(ctx context.Context, report func(key string, err error)) (map[string]*store.ZoneData, error) {
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("store: load: %w", err)
	}
	if report == nil {
		report = func(string, error) {}
	}
	zones := map[string]*store.ZoneData{}
	err := b.db.View(func(tx *bbolt.Tx) error {
		return tx.ForEach(func(name []byte, zb *bbolt.Bucket) error {
			zone, ok := strings.CutPrefix(string(name), boltZonePrefix)
			if !ok {
				return nil
			}
			if z := boltReadZone(zone, zb, report); z != nil {
				zones[zone] = z
			}
			return ctx.Err()
		})
	})
	if err != nil {
		return nil, fmt.Errorf("store: load %s: %w", b.path, err)
	}
	return zones, nil
}

// boltReadZone reads one zone bucket. Undecodable values go to report and
// are skipped; a zone without a readable serial is skipped whole (nil).
func boltReadZone(zone string, zb *bbolt.Bucket, report func(string, error)) *store.ZoneData {
	key := boltZonePrefix + zone
	serial, err := boltZoneSerial(zb)
	if err != nil {
		report(key+"/meta/serial", fmt.Errorf("store: zone %s: %w", zone, err))
		return nil
	}
	z := &store.ZoneData{Name: zone, Serial: serial, VMs: map[string][]store.Record{}}
	if vms := zb.Bucket(boltVMsKey); vms != nil {
		vms.ForEach(func(k, v []byte) error {
			recs, err := store.DecodeVMRecords(zone, string(k), v)
			if err != nil {
				report(key+"/vms/"+string(k), err)
				return nil
			}
			z.VMs[string(k)] = recs
			return nil
		})
	}
	z.Journal = boltReadJournal(zone, zb.Bucket(boltJournalKey), nil, report)
	return z
}
