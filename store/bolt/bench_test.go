package bolt_test

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/cnsd/cnsd/store"
	"github.com/cnsd/cnsd/store/bolt"
	"github.com/cnsd/cnsd/zonegen"
)

// The benchmark's zones: instance and service names, public names, and
// reverse names for the public addresses.
const (
	benchZone    = "dc1.cns.example.com"
	benchPub     = "pub.example.com"
	benchReverse = "51.198.in-addr.arpa"
)

// benchVM returns VM i's records per zone, shaped like zonegen's output:
// about 10 records, a third of the VMs in a service with an SRV record.
func benchVM(i, version int) (vm string, zones map[string][]store.Record) {
	vm = fmt.Sprintf("c0000000-0000-4000-8000-%012d", i)
	login := fmt.Sprintf("user%d", i%1000)
	v4 := fmt.Sprintf("198.51.%d.%d", i>>8&0xff, (i+version)&0xff)
	inst := fmt.Sprintf("vm-%d.inst.%s.", i, login)
	rec := func(zone, name string, t zonegen.Type, data string) store.Record {
		return store.Record{Name: name + zone + ".", Type: t, Data: data, Source: vm}
	}
	dc := []store.Record{
		rec(benchZone, vm+".inst."+login+".", zonegen.TypeA, v4),
		rec(benchZone, vm+".inst."+login+".", zonegen.TypeTXT, zonegen.QuoteTXT(vm)),
		rec(benchZone, inst, zonegen.TypeA, v4),
		rec(benchZone, inst, zonegen.TypeAAAA, fmt.Sprintf("2001:db8::%x:%x", version, i)),
		rec(benchZone, inst, zonegen.TypeTXT, zonegen.QuoteTXT(vm)),
	}
	if i%3 == 0 {
		dc = append(dc, rec(benchZone, "web.svc."+login+".", zonegen.TypeA, v4),
			rec(benchZone, "_web._tcp.web.svc."+login+".", zonegen.TypeSRV, "0 10 80 "+inst+benchZone+"."))
	}
	pub := []store.Record{
		rec(benchPub, vm+".inst."+login+".", zonegen.TypeA, v4),
		rec(benchPub, inst, zonegen.TypeA, v4),
	}
	rev := []store.Record{rec(benchReverse, fmt.Sprintf("%d.%d.", (i+version)&0xff, i>>8&0xff), zonegen.TypePTR, inst+benchZone+".")}
	zones = map[string][]store.Record{benchZone: dc, benchPub: pub, benchReverse: rev}
	for _, recs := range zones {
		slices.SortFunc(recs, store.Record.Compare)
	}
	return vm, zones
}

// benchBootstrap is the first commit of n VMs: one new serial per zone,
// whose diff adds every record. It returns the record count too.
func benchBootstrap(n int) ([]store.ZoneChange, int) {
	byZone := map[string]*store.ZoneChange{}
	records := 0
	for i := range n {
		vm, zones := benchVM(i, 0)
		for zone, recs := range zones {
			c := byZone[zone]
			if c == nil {
				c = &store.ZoneChange{Zone: zone, Next: 1000, SetVMs: map[string][]store.Record{}, KeepJournal: 100,
					Diff: store.Diff{Zone: zone, To: 1000}}
				byZone[zone] = c
			}
			c.SetVMs[vm] = recs
			c.Diff.Added = append(c.Diff.Added, recs...)
			records += len(recs)
		}
	}
	var changes []store.ZoneChange
	for _, c := range byZone {
		slices.SortFunc(c.Diff.Added, store.Record.Compare)
		changes = append(changes, *c)
	}
	return changes, records
}

// boltBenchVMs is how many VMs the bbolt benchmarks hold: 100k, or 10k
// with -short (make bench-smoke only checks that they run).
func boltBenchVMs() int {
	if testing.Short() {
		return 10_000
	}
	return 100_000
}

// BenchmarkBoltBootstrap100k applies 100k VMs (about 1M records) as one
// commit to a fresh file, with fsync, and reports records per second and
// file bytes per record (the VMs' records plus the bootstrap diff in the
// journal).
func BenchmarkBoltBootstrap100k(b *testing.B) {
	changes, records := benchBootstrap(boltBenchVMs())
	var size int64
	b.ResetTimer()
	for range b.N {
		b.StopTimer()
		path := filepath.Join(b.TempDir(), "cnsd.db")
		db, err := bolt.Open(path, bolt.Options{})
		if err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
		if err := db.Apply(b.Context(), 1, changes); err != nil {
			b.Fatal(err)
		}
		b.StopTimer()
		db.Close()
		fi, err := os.Stat(path)
		if err != nil {
			b.Fatal(err)
		}
		size = fi.Size()
		b.StartTimer()
	}
	b.ReportMetric(float64(records)*float64(b.N)/b.Elapsed().Seconds(), "records/s")
	b.ReportMetric(float64(size)/float64(records), "file-bytes/record")
	b.ReportMetric(float64(records), "records")
}

// BenchmarkBoltCommitOneVM measures one VM's update (one zone, one
// serial, journal append and trim, fsync) on a file holding 100k VMs.
func BenchmarkBoltCommitOneVM(b *testing.B) {
	db, _ := benchFull(b)
	serial := store.Serial(1000)
	b.ResetTimer()
	for i := range b.N {
		vm, zones := benchVM(i%boltBenchVMs(), i+1)
		_, old := benchVM(i%boltBenchVMs(), i)
		c := store.ZoneChange{Zone: benchZone, Prev: serial, Next: serial + 1,
			SetVMs:      map[string][]store.Record{vm: zones[benchZone]},
			Diff:        store.Diff{Zone: benchZone, From: serial, To: serial + 1, Removed: old[benchZone], Added: zones[benchZone]},
			KeepJournal: 100}
		if err := db.Apply(b.Context(), 1, []store.ZoneChange{c}); err != nil {
			b.Fatal(err)
		}
		serial++
	}
}

// benchFull returns a store holding the 100k VMs of benchBootstrap, closed
// when b ends, and its record count.
func benchFull(b *testing.B) (*bolt.Backend, int) {
	changes, records := benchBootstrap(boltBenchVMs())
	db, err := bolt.Open(filepath.Join(b.TempDir(), "cnsd.db"), bolt.Options{})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { db.Close() })
	if err := db.Apply(b.Context(), 1, changes); err != nil {
		b.Fatal(err)
	}
	return db, records
}

// BenchmarkBoltLoad100k measures a restart's Load of 100k VMs (about 1M
// records, plus the bootstrap diff in the journal) and reports records/s.
func BenchmarkBoltLoad100k(b *testing.B) {
	db, records := benchFull(b)
	b.ResetTimer()
	for range b.N {
		zones, err := db.Load(b.Context(), func(key string, err error) { b.Errorf("%s: %v", key, err) })
		if err != nil || len(zones) != 3 {
			b.Fatalf("Load: %d zones, %v", len(zones), err)
		}
	}
	b.ReportMetric(float64(records)*float64(b.N)/b.Elapsed().Seconds(), "records/s")
}
