package redis

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"

	"github.com/cnsd/cnsd/store"
	goredis "github.com/redis/go-redis/v9"
)

// Load reads every listed zone, each from one MULTI snapshot. Undecodable
// values are reported and skipped; a zone without a serial key (listed
// before a first write that never happened) is skipped silently.
func (r *Backend) Load(ctx context.Context, report func(key string, err error)) (map[string]*store.ZoneData, error) {
	if report == nil {
		report = func(string, error) {}
	}
	zones, err := r.c.SMembers(ctx, redisZonesKey).Result()
	if err != nil {
		return nil, fmt.Errorf("store: redis list zones: %w", err)
	}
	out := make(map[string]*store.ZoneData, len(zones))
	for _, zone := range zones {
		zd, err := r.readZone(ctx, zone, report)
		if err != nil {
			return nil, err
		}
		if zd != nil {
			out[zone] = zd
		}
	}
	return out, nil
}

// Zones lists the zones that have a serial, sorted.
func (r *Backend) Zones(ctx context.Context) ([]string, error) {
	serials, err := r.serials(ctx)
	if err != nil {
		return nil, err
	}
	zones := make([]string, 0, len(serials))
	for z := range serials {
		zones = append(zones, z)
	}
	slices.Sort(zones)
	return zones, nil
}

// Serials returns every zone's serial (store.SerialLister); a serial
// key that is not a number is an error naming it.
func (r *Backend) Serials(ctx context.Context) (map[string]store.Serial, error) {
	raw, err := r.serials(ctx)
	if err != nil {
		return nil, err
	}
	out := make(map[string]store.Serial, len(raw))
	for zone, v := range raw {
		n, err := strconv.ParseUint(v, 10, 32)
		if err != nil {
			return nil, fmt.Errorf("store: redis key %s: serial %q: %w", zoneKeys(zone).serial, v, err)
		}
		out[zone] = store.Serial(n)
	}
	return out, nil
}

// serials returns each listed zone's serial key as stored, skipping
// zones without one.
func (r *Backend) serials(ctx context.Context) (map[string]string, error) {
	zones, err := r.c.SMembers(ctx, redisZonesKey).Result()
	if err != nil {
		return nil, fmt.Errorf("store: redis list zones: %w", err)
	}
	cmds := make([]*goredis.StringCmd, len(zones))
	_, err = r.c.Pipelined(ctx, func(p goredis.Pipeliner) error {
		for i, z := range zones {
			cmds[i] = p.Get(ctx, zoneKeys(z).serial)
		}
		return nil
	})
	if err != nil && !errors.Is(err, goredis.Nil) {
		return nil, fmt.Errorf("store: redis read serials: %w", err)
	}
	out := make(map[string]string, len(zones))
	for i, z := range zones {
		if s, err := cmds[i].Result(); err == nil {
			out[z] = s
		}
	}
	return out, nil
}

// readZone reads one zone atomically; nil when it has no serial.
func (r *Backend) readZone(ctx context.Context, zone string, report func(string, error)) (*store.ZoneData, error) {
	k := zoneKeys(zone)
	var serial *goredis.StringCmd
	var vms *goredis.MapStringStringCmd
	var journal *goredis.StringSliceCmd
	_, err := r.c.TxPipelined(ctx, func(p goredis.Pipeliner) error {
		serial = p.Get(ctx, k.serial)
		vms = p.HGetAll(ctx, k.vms)
		journal = p.LRange(ctx, k.journal, 0, -1)
		return nil
	})
	if errors.Is(err, goredis.Nil) && errors.Is(serial.Err(), goredis.Nil) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("store: redis read zone %s: %w", zone, err)
	}
	s, err := strconv.ParseUint(serial.Val(), 10, 32)
	if err != nil {
		report(k.serial, fmt.Errorf("zone %s: serial %q: %w", zone, serial.Val(), err))
		return nil, nil
	}
	zd := &store.ZoneData{Name: zone, Serial: store.Serial(s), VMs: make(map[string][]store.Record, len(vms.Val()))}
	for vm, v := range vms.Val() {
		recs, err := store.DecodeVMRecords(zone, vm, []byte(v))
		if err != nil {
			report(k.vms+" "+vm, err)
			continue
		}
		zd.VMs[vm] = recs
	}
	zd.Journal = decodeJournal(zone, k.journal, zd.Serial, journal.Val(), report)
	return zd, nil
}

// decodeJournal decodes the journal and keeps its longest tail that is a
// chain of diffs ending at serial: an entry that cannot be decoded, or a
// gap, cuts off everything older, since a diff sequence must be unbroken.
func decodeJournal(zone, key string, serial store.Serial, vals []string, report func(string, error)) []store.Diff {
	diffs := make([]store.Diff, len(vals))
	start := 0
	for i, v := range vals {
		d, err := decodeJournalEntry(zone, []byte(v))
		if err != nil {
			report(key+" "+strconv.Itoa(i), err)
			start = i + 1
			continue
		}
		diffs[i] = d
	}
	diffs = diffs[start:]
	if len(diffs) == 0 {
		return nil
	}
	if diffs[len(diffs)-1].To != serial {
		report(key, fmt.Errorf("zone %s: journal ends at serial %d, zone is at %d", zone, diffs[len(diffs)-1].To, serial))
		return nil
	}
	for i := len(diffs) - 1; i > 0; i-- {
		if diffs[i].From != diffs[i-1].To {
			report(key, fmt.Errorf("zone %s: journal gap between serials %d and %d", zone, diffs[i-1].To, diffs[i].From))
			return diffs[i:]
		}
	}
	return diffs
}
