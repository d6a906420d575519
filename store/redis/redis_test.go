package redis

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/cnsd/cnsd/store"
	"github.com/cnsd/cnsd/store/redistest"
	"github.com/cnsd/cnsd/zonegen"
	goredis "github.com/redis/go-redis/v9"
)

// go-redis logs every failed dial; the tests that kill servers expect them.
func init() { goredis.SetLogger(quietRedisLogger{}) }

type quietRedisLogger struct{}

func (quietRedisLogger) Printf(context.Context, string, ...any) {}

// openTestRedis starts a redis-server and opens a backend on it.
func openTestRedis(t testing.TB, opts Options) (*Backend, *redistest.Server) {
	t.Helper()
	srv := redistest.Start(t)
	return openRedisAt(t, srv.URL(), opts), srv
}

func openRedisAt(t testing.TB, url string, opts Options) *Backend {
	t.Helper()
	r, err := Open(context.Background(), url, opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.Close() })
	return r
}

// aRec is an A record of vm at name in zone.
func redisA(zone, name, ip, vm string) store.Record {
	return store.Record{Name: name + "." + zone, Type: zonegen.TypeA, Data: ip, Source: vm}
}

func TestRedisApplyLoad(t *testing.T) {
	ctx := context.Background()
	r, _ := openTestRedis(t, Options{})
	zone := "a.example."
	r1 := redisA(zone, "web", "10.0.0.1", "vm1")
	r2 := redisA(zone, "db", "10.0.0.2", "vm2")
	d1 := store.Diff{Zone: zone, From: 0, To: 10, Added: []store.Record{r2, r1}}
	redisMust(t, r.Apply(ctx, 1, []store.ZoneChange{{Zone: zone, Prev: 0, Next: 10,
		SetVMs: map[string][]store.Record{"vm1": {r1}, "vm2": {r2}}, Diff: d1, KeepJournal: 2}}))
	d2 := store.Diff{Zone: zone, From: 10, To: 11, Removed: []store.Record{r2}}
	redisMust(t, r.Apply(ctx, 1, []store.ZoneChange{{Zone: zone, Prev: 10, Next: 11,
		DelVMs: []string{"vm2"}, Diff: d2, KeepJournal: 2}}))
	d3 := store.Diff{Zone: zone, From: 11, To: 12, Removed: []store.Record{r1}}
	redisMust(t, r.Apply(ctx, 1, []store.ZoneChange{{Zone: zone, Prev: 11, Next: 12,
		SetVMs: map[string][]store.Record{"vm1": nil}, Diff: d3, KeepJournal: 2}}))

	got := redisLoad(t, r)
	want := map[string]*store.ZoneData{zone: {Name: zone, Serial: 12,
		VMs: map[string][]store.Record{"vm1": nil}, Journal: []store.Diff{d2, d3}}}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("Load:\n got %s\nwant %s", redisDump(got), redisDump(want))
	}
	zones, err := r.Zones(ctx)
	redisMust(t, err)
	if !reflect.DeepEqual(zones, []string{zone}) {
		t.Errorf("Zones = %v", zones)
	}
}

func TestRedisConflictAndFencing(t *testing.T) {
	ctx := context.Background()
	r, _ := openTestRedis(t, Options{})
	change := func(zone string, prev, next store.Serial) store.ZoneChange {
		return store.ZoneChange{Zone: zone, Prev: prev, Next: next, KeepJournal: 5,
			Diff: store.Diff{Zone: zone, From: prev, To: next}}
	}
	redisMust(t, r.Apply(ctx, 5, []store.ZoneChange{change("a.", 0, 1)}))
	tests := []struct {
		name    string
		epoch   uint64
		changes []store.ZoneChange
		want    error
	}{
		{"stale prev", 5, []store.ZoneChange{change("a.", 0, 2)}, store.ErrConflict},
		{"existing zone as new", 5, []store.ZoneChange{change("a.", 7, 8)}, store.ErrConflict},
		{"older epoch, same zone", 4, []store.ZoneChange{change("a.", 1, 2)}, store.ErrFenced},
		{"older epoch, other zone", 4, []store.ZoneChange{change("b.", 0, 1)}, store.ErrFenced},
		{"same epoch", 5, []store.ZoneChange{change("a.", 1, 2)}, nil},
		{"newer epoch", 6, []store.ZoneChange{change("a.", 2, 3)}, nil},
		{"the old one again", 5, []store.ZoneChange{change("a.", 3, 4)}, store.ErrFenced},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := r.Apply(ctx, tt.epoch, tt.changes)
			if !errors.Is(err, tt.want) || (tt.want == nil) != (err == nil) {
				t.Fatalf("Apply = %v, want %v", err, tt.want)
			}
			if err != nil && !strings.Contains(err.Error(), tt.changes[0].Zone) && !errors.Is(err, store.ErrFenced) {
				t.Errorf("error %q does not name zone %s", err, tt.changes[0].Zone)
			}
		})
	}
	got := redisLoad(t, r)
	if len(got) != 1 || got["a."].Serial != 3 {
		t.Fatalf("after the table: %s", redisDump(got))
	}
}

func TestRedisConflictLeavesOtherZones(t *testing.T) {
	ctx := context.Background()
	r, _ := openTestRedis(t, Options{})
	redisMust(t, r.Apply(ctx, 1, []store.ZoneChange{{Zone: "a.", Next: 1, KeepJournal: 1, Diff: store.Diff{To: 1}}}))
	err := r.Apply(ctx, 1, []store.ZoneChange{
		{Zone: "a.", Prev: 5, Next: 6, KeepJournal: 1, Diff: store.Diff{From: 5, To: 6}},
		{Zone: "b.", Next: 1, KeepJournal: 1, Diff: store.Diff{To: 1}},
	})
	if !errors.Is(err, store.ErrConflict) || !strings.Contains(err.Error(), "zone a.") {
		t.Fatalf("Apply = %v, want ErrConflict naming zone a.", err)
	}
	if got := redisLoad(t, r); got["a."].Serial != 1 || got["b."] == nil || got["b."].Serial != 1 {
		t.Fatalf("after conflict: %s", redisDump(got))
	}
}

func TestRedisDrop(t *testing.T) {
	ctx := context.Background()
	r, srv := openTestRedis(t, Options{})
	rec := redisA("a.", "x", "10.0.0.1", "vm1")
	redisMust(t, r.Apply(ctx, 1, []store.ZoneChange{{Zone: "a.", Next: 1, KeepJournal: 1,
		SetVMs: map[string][]store.Record{"vm1": {rec}}, Diff: store.Diff{To: 1, Added: []store.Record{rec}}}}))
	if err := r.Apply(ctx, 1, []store.ZoneChange{{Zone: "a.", Prev: 9, Next: 10, Drop: true}}); !errors.Is(err, store.ErrConflict) {
		t.Fatalf("drop from a wrong serial = %v, want ErrConflict", err)
	}
	redisMust(t, r.Apply(ctx, 1, []store.ZoneChange{{Zone: "a.", Prev: 1, Next: 2, Drop: true}}))
	if got := redisLoad(t, r); len(got) != 0 {
		t.Fatalf("after drop: %s", redisDump(got))
	}
	keys, err := r.c.Keys(ctx, "*").Result()
	redisMust(t, err)
	for _, k := range keys {
		// The floor outlives the zone (floor.go).
		if (strings.HasPrefix(k, "{cnsd:z:") || k == redisZonesKey) && k != zoneKeys("a.").floor {
			t.Errorf("key %s left after drop (server %s)", k, srv.Addr())
		}
	}
	if f, err := r.c.Get(ctx, zoneKeys("a.").floor).Result(); err != nil || f != "1" {
		t.Errorf("floor after the drop = %q (%v), want the final serial 1", f, err)
	}
	diffs, zd, err := r.Since(ctx, "a.", 1)
	if diffs != nil || zd != nil || err != nil {
		t.Errorf("Since on a dropped zone = %v, %v, %v", diffs, zd, err)
	}
}

func TestRedisApplyRefusesWrongKeyType(t *testing.T) {
	ctx := context.Background()
	r, _ := openTestRedis(t, Options{})
	redisMust(t, r.c.Set(ctx, zoneKeys("a.").vms, "not a hash", 0).Err())
	err := r.Apply(ctx, 1, []store.ZoneChange{{Zone: "a.", Next: 1, KeepJournal: 1,
		SetVMs: map[string][]store.Record{"vm1": nil}, Diff: store.Diff{To: 1}}})
	if err == nil || !strings.Contains(err.Error(), "{cnsd:z:a.}:vms") {
		t.Fatalf("Apply over a string vms key = %v, want an error naming the key", err)
	}
	if n, _ := r.c.Exists(ctx, zoneKeys("a.").serial, zoneKeys("a.").epoch).Result(); n != 0 {
		t.Errorf("%d zone keys written before the failure", n)
	}
}

func TestRedisLoadSkipsListedZoneWithoutSerial(t *testing.T) {
	ctx := context.Background()
	r, _ := openTestRedis(t, Options{})
	redisMust(t, r.c.SAdd(ctx, redisZonesKey, "crashed.").Err())
	if got := redisLoad(t, r); len(got) != 0 {
		t.Fatalf("Load = %s, want nothing", redisDump(got))
	}
}

func TestRedisCorruptValues(t *testing.T) {
	ctx := context.Background()
	r, _ := openTestRedis(t, Options{})
	good := redisA("a.", "x", "10.0.0.1", "vm1")
	for _, z := range []string{"a.", "b."} {
		redisMust(t, r.Apply(ctx, 1, []store.ZoneChange{{Zone: z, Next: 1, KeepJournal: 3,
			SetVMs: map[string][]store.Record{"vm1": {good}}, Diff: store.Diff{To: 1}}}))
	}
	redisMust(t, r.c.HSet(ctx, zoneKeys("a.").vms, "vm2", "\x01\xff\xff garbage").Err())
	redisMust(t, r.c.RPush(ctx, zoneKeys("a.").journal, "not a diff").Err())
	redisMust(t, r.c.Set(ctx, zoneKeys("b.").serial, "twelve", 0).Err())

	reported := map[string]error{}
	got, err := r.Load(ctx, func(key string, err error) { reported[key] = err })
	redisMust(t, err)
	for _, key := range []string{"{cnsd:z:a.}:vms vm2", "{cnsd:z:a.}:journal 1", "{cnsd:z:b.}:serial"} {
		if reported[key] == nil {
			t.Errorf("no report for key %q; reports: %v", key, reported)
		}
	}
	a := got["a."]
	if a == nil || !reflect.DeepEqual(a.VMs, map[string][]store.Record{"vm1": {good}}) {
		t.Errorf("zone a. = %s, want vm1's record only", redisDump(got))
	}
	if a != nil && len(a.Journal) != 0 {
		t.Errorf("journal cut at the bad entry should be empty, got %v", a.Journal)
	}
	if _, ok := got["b."]; ok {
		t.Errorf("zone b. with a bad serial loaded")
	}
}

func TestRedisFollower(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	w, srv := openTestRedis(t, Options{})
	f := openRedisAt(t, srv.URL(), Options{PollInterval: time.Hour}) // pub/sub only
	changed := f.Changed(ctx)
	zone := "f.example."
	rec := redisA(zone, "x", "10.0.0.1", "vm1")
	d1 := store.Diff{Zone: zone, From: 0, To: 1, Added: []store.Record{rec}}
	redisMust(t, w.Apply(ctx, 1, []store.ZoneChange{{Zone: zone, Next: 1, KeepJournal: 5,
		SetVMs: map[string][]store.Record{"vm1": {rec}}, Diff: d1}}))
	redisWaitChanged(t, changed)

	rec2 := redisA(zone, "x", "10.0.0.2", "vm1")
	d2 := store.Diff{Zone: zone, From: 1, To: 2, Removed: []store.Record{rec}, Added: []store.Record{rec2}}
	redisMust(t, w.Apply(ctx, 1, []store.ZoneChange{{Zone: zone, Prev: 1, Next: 2, KeepJournal: 5,
		SetVMs: map[string][]store.Record{"vm1": {rec2}}, Diff: d2}}))
	redisWaitChanged(t, changed)

	diffs, zd, err := f.Since(ctx, zone, 1)
	redisMust(t, err)
	if zd != nil || !reflect.DeepEqual(diffs, []store.Diff{d2}) {
		t.Fatalf("Since(1) = %v, %v; want [%v]", diffs, zd, d2)
	}
	diffs, zd, err = f.Since(ctx, zone, 2)
	if err != nil || len(diffs) != 0 || zd != nil {
		t.Fatalf("Since(current) = %v, %v, %v; want no diffs", diffs, zd, err)
	}
	diffs, zd, err = f.Since(ctx, zone, 77)
	redisMust(t, err)
	if diffs != nil || zd == nil || zd.Serial != 2 || !reflect.DeepEqual(zd.VMs["vm1"], []store.Record{rec2}) {
		t.Fatalf("Since(uncovered) = %v, %s; want the whole zone", diffs, redisDump(map[string]*store.ZoneData{zone: zd}))
	}
	cancel()
	for range changed { // closed when ctx ends
	}
}

func TestRedisFollowerPollsWhenMessagesAreLost(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	w, srv := openTestRedis(t, Options{})
	f := openRedisAt(t, srv.URL(), Options{PollInterval: 50 * time.Millisecond})
	changed := f.Changed(ctx)
	// A serial written without the script publishes nothing.
	redisMust(t, w.c.SAdd(ctx, redisZonesKey, "p.").Err())
	redisMust(t, w.c.Set(ctx, zoneKeys("p.").serial, "3", 0).Err())
	redisWaitChanged(t, changed)
}

func redisWaitChanged(t *testing.T, ch <-chan struct{}) {
	t.Helper()
	select {
	case _, ok := <-ch:
		if !ok {
			t.Fatal("Changed channel closed")
		}
	case <-time.After(5 * time.Second):
		t.Fatal("no Changed signal within 5s")
	}
}

func redisLoad(t testing.TB, r *Backend) map[string]*store.ZoneData {
	t.Helper()
	got, err := r.Load(context.Background(), func(key string, err error) {
		t.Errorf("Load reported %s: %v", key, err)
	})
	redisMust(t, err)
	return got
}

func redisDump(m map[string]*store.ZoneData) string {
	var b strings.Builder
	for z, d := range m {
		if d == nil {
			fmt.Fprintf(&b, "%s: nil; ", z)
			continue
		}
		fmt.Fprintf(&b, "%s: %+v; ", z, *d)
	}
	return b.String()
}

func redisMust(t testing.TB, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

func TestRedisFollowerSurvivesServerRestart(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	srv := redistest.Start(t)
	f := openRedisAt(t, srv.URL(), Options{PollInterval: 100 * time.Millisecond})
	changed := f.Changed(ctx)
	srv.Restart()
	w := openRedisAt(t, srv.URL(), Options{})
	redisMust(t, w.Apply(ctx, 1, []store.ZoneChange{{Zone: "r.", Next: 1, KeepJournal: 1, Diff: store.Diff{To: 1}}}))
	select {
	case <-changed:
	case <-time.After(15 * time.Second):
		t.Fatal("no Changed signal after the server restarted")
	}
}

// TestRedisBulkApply writes a bootstrap-sized commit (zones of
// thousands of VMs, their values encoded in parallel, beside a small
// one; VMs of no record to many) and reads every VM back.
func TestRedisBulkApply(t *testing.T) {
	ctx := context.Background()
	r, _ := openTestRedis(t, Options{})
	var changes []store.ZoneChange
	for _, z := range []struct {
		zone string
		vms  int
	}{{"dc1.example.", 9000}, {"pub.example.", 1200}, {"0.10.in-addr.arpa.", 3}} {
		c := store.ZoneChange{Zone: z.zone, Next: 7, SetVMs: map[string][]store.Record{},
			Diff: store.Diff{Zone: z.zone, To: 7}}
		for i := range z.vms {
			vm := fmt.Sprintf("c0000000-0000-4000-8000-%012d", i)
			recs := []store.Record{}
			for j := range i % 4 {
				recs = append(recs, redisA(z.zone, fmt.Sprintf("vm%d-%d", i, j), fmt.Sprintf("10.%d.%d.%d", j, i>>8&0xff, i&0xff), vm))
			}
			c.SetVMs[vm] = recs
		}
		changes = append(changes, c)
	}
	redisMust(t, r.Apply(ctx, 1, changes))
	got := redisLoad(t, r)
	for _, c := range changes {
		z := got[c.Zone]
		if z == nil || z.Serial != 7 || len(z.VMs) != len(c.SetVMs) {
			t.Fatalf("zone %s read back: %v", c.Zone, z)
		}
		for vm, want := range c.SetVMs {
			if recs := z.VMs[vm]; len(recs) != len(want) || (len(want) > 0 && !reflect.DeepEqual(recs, want)) {
				t.Fatalf("zone %s vm %s read back %v, want %v", c.Zone, vm, recs, want)
			}
		}
	}
}
