package redis

import (
	"context"
	"fmt"
	"os/exec"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/cnsd/cnsd/store"
	"github.com/cnsd/cnsd/store/redistest"
	"github.com/cnsd/cnsd/zonegen"
)

// The Redis benchmarks run against a redistest server (AOF, appendfsync
// always), so commit latency includes the fsync every write pays:
//
//	go test -run '^$' -bench 'BenchmarkRedis(Bootstrap100k|Memory)' -benchtime=1x ./store
//	go test -run '^$' -bench BenchmarkRedisCommitOneVM -benchtime=2000x ./store
//
// BenchmarkRedisBootstrap100k also runs redis-benchmark's pipelined HSET
// against the same server and reports the bootstrap's VM hash writes per
// second as a fraction of it.

var redisBenchZones = []string{"dc1.cns.example.com.", "pub.example.com.", "10.in-addr.arpa."}

// redisBenchData is a bootstrap of n VMs with ten records each, shaped like
// zonegen's output: instance names by UUID and alias with A, AAAA and TXT
// in the private zone, alias and a service with SRV in the public zone,
// and PTRs for two addresses in the reverse zone.
type redisBenchData struct {
	vms     map[string]map[string][]store.Record // zone → VM → records
	changes []store.ZoneChange                   // the bootstrap commit
	records int
}

func redisBenchVMRecords(i, version int) map[string][]store.Record {
	vm := fmt.Sprintf("c0000000-0000-4000-8000-%012d", i)
	user := fmt.Sprintf("user%d", i%97)
	alias := fmt.Sprintf("web-%d", i)
	v4 := func(n int) string { return fmt.Sprintf("10.%d.%d.%d", n>>16&255, n>>8&255, n&255) }
	a, b := v4(2*i+version), v4(2*i+1+version)
	rev := func(ip string) string {
		p := strings.Split(ip, ".")
		return p[3] + "." + p[2] + "." + p[1] + ".10.in-addr.arpa."
	}
	priv, pub := redisBenchZones[0], redisBenchZones[1]
	inst := alias + ".inst." + user + "." + priv
	out := map[string][]store.Record{
		priv: {
			{Name: vm + ".inst." + user + "." + priv, Type: zonegen.TypeA, Data: a},
			{Name: vm + ".inst." + user + "." + priv, Type: zonegen.TypeTXT, Data: zonegen.QuoteTXT(vm)},
			{Name: inst, Type: zonegen.TypeA, Data: a},
			{Name: inst, Type: zonegen.TypeAAAA, Data: fmt.Sprintf("2001:db8::%x:%x", version, i)},
		},
		pub: {
			{Name: alias + ".inst." + user + "." + pub, Type: zonegen.TypeA, Data: b},
			{Name: alias + ".inst." + user + "." + pub, Type: zonegen.TypeAAAA, Data: fmt.Sprintf("2001:db8:1::%x:%x", version, i)},
			{Name: "web.svc." + user + "." + pub, Type: zonegen.TypeA, Data: b},
			{Name: "_web._tcp.web.svc." + user + "." + pub, Type: zonegen.TypeSRV, Data: "0 10 80 " + alias + ".inst." + user + "." + pub},
		},
		redisBenchZones[2]: {
			{Name: rev(a), Type: zonegen.TypePTR, Data: inst},
			{Name: rev(b), Type: zonegen.TypePTR, Data: alias + ".inst." + user + "." + pub},
		},
	}
	for z, recs := range out {
		for j := range recs {
			recs[j].Source = vm
		}
		slices.SortFunc(recs, store.Record.Compare)
		out[z] = recs
	}
	return out
}

func newRedisBenchData(n int) *redisBenchData {
	d := &redisBenchData{vms: map[string]map[string][]store.Record{}}
	for _, z := range redisBenchZones {
		d.vms[z] = make(map[string][]store.Record, n)
	}
	for i := range n {
		for z, recs := range redisBenchVMRecords(i, 0) {
			d.vms[z][recs[0].Source] = recs
			d.records += len(recs)
		}
	}
	for _, z := range redisBenchZones {
		var added []store.Record
		for _, recs := range d.vms[z] {
			added = append(added, recs...)
		}
		slices.SortFunc(added, store.Record.Compare)
		serial := store.TimeSerial(time.Now())
		d.changes = append(d.changes, store.ZoneChange{Zone: z, Next: serial, SetVMs: d.vms[z], KeepJournal: 100,
			Diff: store.Diff{Zone: z, From: 0, To: serial, Added: added}})
	}
	return d
}

// hashFields is how many VM hash fields the bootstrap writes: the
// HSET-equivalent operations compared with redis-benchmark.
func (d *redisBenchData) hashFields() int {
	n := 0
	for _, vms := range d.vms {
		n += len(vms)
	}
	return n
}

func BenchmarkRedisBootstrap100k(b *testing.B) {
	ctx := context.Background()
	d := newRedisBenchData(benchVMs())
	r, srv := openTestRedis(b, Options{})
	var elapsed time.Duration
	for b.Loop() {
		b.StopTimer()
		redisMust(b, r.c.FlushAll(ctx).Err())
		b.StartTimer()
		start := time.Now()
		redisMust(b, r.Apply(ctx, 1, d.changes))
		elapsed += time.Since(start)
	}
	b.StopTimer()
	sec := elapsed.Seconds() / float64(b.N)
	hsets := float64(d.hashFields()) / sec
	b.ReportMetric(float64(d.records)/sec, "records/s")
	b.ReportMetric(hsets, "hset/s")
	limit := redisBenchmarkHSET(b, srv)
	b.ReportMetric(limit, "redis-benchmark-hset/s")
	b.ReportMetric(hsets/limit, "fraction-of-limit")
}

func BenchmarkRedisCommitOneVM(b *testing.B) {
	ctx := context.Background()
	d := newRedisBenchData(benchVMs())
	r, _ := openTestRedis(b, Options{})
	redisMust(b, r.Apply(ctx, 1, d.changes))
	serial := d.changes[0].Next
	zone := redisBenchZones[0]
	i := 0
	for b.Loop() {
		i++
		vm := i % len(d.vms[zone])
		now := redisBenchVMRecords(vm, i)[zone]
		uuid := now[0].Source
		old := d.vms[zone][uuid]
		d.vms[zone][uuid] = now
		c := store.ZoneChange{Zone: zone, Prev: serial, Next: serial + 1, KeepJournal: 100,
			SetVMs: map[string][]store.Record{uuid: now},
			Diff:   store.Diff{Zone: zone, From: serial, To: serial + 1, Removed: old, Added: now}}
		redisMust(b, r.Apply(ctx, 1, []store.ZoneChange{c}))
		serial++
	}
}

func BenchmarkRedisMemory(b *testing.B) {
	ctx := context.Background()
	d := newRedisBenchData(benchVMs())
	r, _ := openTestRedis(b, Options{})
	for b.Loop() {
		b.StopTimer()
		redisMust(b, r.c.FlushAll(ctx).Err())
		before := redisUsedMemory(b, r)
		b.StartTimer()
		redisMust(b, r.Apply(ctx, 1, d.changes))
		b.StopTimer()
		after := redisUsedMemory(b, r)
		var keys, journal int64
		for _, z := range redisBenchZones {
			k := zoneKeys(z)
			for _, key := range k.list() {
				n, err := r.c.MemoryUsage(ctx, key, 0).Result()
				redisMust(b, err)
				keys += n
				if key == k.journal {
					journal += n
				}
			}
		}
		recs := float64(d.records)
		b.ReportMetric(float64(keys)/recs, "bytes/record")
		b.ReportMetric(float64(keys-journal)/recs, "bytes/record-without-journal")
		b.ReportMetric(float64(after-before)/recs, "used_memory-delta/record")
		b.StartTimer()
	}
}

func redisUsedMemory(b *testing.B, r *Backend) int64 {
	info, err := r.c.Info(context.Background(), "memory").Result()
	redisMust(b, err)
	m := regexp.MustCompile(`(?m)^used_memory:(\d+)`).FindStringSubmatch(info)
	if m == nil {
		b.Fatalf("no used_memory in INFO memory: %q", info)
	}
	n, _ := strconv.ParseInt(m[1], 10, 64)
	return n
}

// redisBenchmarkHSET runs redis-benchmark against srv and returns its
// HSET requests per second: what this machine and server can do.
func redisBenchmarkHSET(b *testing.B, srv *redistest.Server) float64 {
	out, err := exec.Command("redis-benchmark", "-p", strconv.Itoa(srv.Port()),
		"-P", "16", "-t", "hset", "-n", strconv.Itoa(10*benchVMs()), "-q").CombinedOutput()
	if err != nil {
		b.Fatalf("redis-benchmark (Debian package redis-tools): %v\n%s", err, out)
	}
	m := regexp.MustCompile(`HSET: ([\d.]+) requests per second`).FindSubmatch(out)
	if m == nil {
		b.Fatalf("no HSET rate in redis-benchmark output %q", out)
	}
	v, _ := strconv.ParseFloat(string(m[1]), 64)
	return v
}
