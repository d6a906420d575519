package pipeline

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"runtime/pprof"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/cnsd/cnsd/feed"
	"github.com/cnsd/cnsd/mockcloud"
	"github.com/cnsd/cnsd/store"
	"github.com/cnsd/cnsd/store/bolt"
	"github.com/cnsd/cnsd/store/redis"
	"github.com/cnsd/cnsd/store/redistest"
	"github.com/cnsd/cnsd/zonegen"
)

// BenchmarkBootstrap measures a first start over a cloud of 100k VMs
// (2,000 with -short): from starting the feeds, the pipeline and a fresh
// store until the store holds every record the oracle computes from the
// cloud. Everything is real but the cloud, and the cloud runs in a
// process of its own (cmd/mockcloud over the generated fixture, with
// slapd for UFDS), as it runs on other machines in production: its CPU
// and its garbage are not cnsd's, and the heap cnsd's collector marks is
// cnsd's alone. cnsd lists VMAPI over HTTP in pages of 1,000, looks up
// accounts in slapd and CNAPI and NAPI over HTTP, and writes the store
// on a bbolt file (embedded) or a redis-server (AOF, fsync always).
// CNAPI is polled at its default interval, as cnsd does.
//
// Before each bootstrap, with the clock stopped, the VMAPI listing alone
// is taken from the same cloud process by the same client
// (feed.VMAPI.List); x-listing is the bootstrap's time over the
// listing's: what evaluating and committing add to the listing that
// cnsd cannot do without (issue 18's aim: at most 1.5). The machine's
// cores are shared by cnsd and the cloud in both timings.
//
// The machine's cores are shared by cnsd and the cloud, so the
// bootstrap's time is bounded by the CPU both spend: cnsd-cpu-s and
// cloud-cpu-s are the CPU time the test process (cnsd) and the cloud's
// process took during the bootstrap (and redis-cpu-s the redis-server's,
// with Redis), listing-cnsd-cpu-s and
// listing-cloud-cpu-s during the listing alone (slapd's, small, is in
// neither).
//
// gc-cycles and gc-cpu-s are the collections the test process ran
// during the bootstrap and the CPU they took (runtime/metrics). Each
// bootstrap starts the store's collector headroom afresh
// (store.StartAfresh), as a new cnsd process would: without it, every
// bootstrap after the first in one run went without the start's
// headroom and collected two to five times the CPU.
//
// peak-MB is the test process's peak resident memory during the
// bootstrap (Linux's VmHWM, reset before it starts): the memory an
// operator must give cnsd for its first start, which the steady state
// after it does not show. store-MB is the embedded store's file after it.
//
// With BOOTSTRAP_LOG=path, each bootstrap's log (level Info: the
// listing, its evaluation, the store's "large commit" with its phases)
// is written to path.<backend>; with BOOTSTRAP_CPUPROFILE=path, a CPU
// profile of the bootstrap alone (not the set-up's oracle and fixture,
// which -cpuprofile would include) to path.<backend>; with
// BOOTSTRAP_TIMELINE=path, every process's CPU in each tenth of a second
// of it (cpuTimeline) to path.<backend>; with BOOTSTRAP_MEMPROFILE=path,
// heap profiles taken as it starts and as it ends to path.<backend>.start
// and path.<backend>.end, whose difference is what the bootstrap
// allocated (go tool pprof -sample_index=alloc_space -base ….start ….end).
//
//	go test ./pipeline -run '^$' -bench Bootstrap -benchtime 1x -count 3
func BenchmarkBootstrap(b *testing.B) {
	vms, accounts, servers := 100_000, 1_000, 100
	if testing.Short() {
		vms, accounts, servers = 2_000, 50, 5
	}
	w, s, want := bootstrapWorld(b, mockcloud.GenOptions{VMs: vms, Accounts: accounts, Servers: servers, Seed: 5})
	var dbFile string // the embedded store's, for store-MB
	var redisPID int  // the redis-server's, for redis-cpu-s
	backends := []struct {
		name string
		open func(b *testing.B) store.Backend
	}{
		{"embedded", func(b *testing.B) store.Backend {
			dbFile = filepath.Join(b.TempDir(), "cnsd.db")
			db, err := bolt.Open(dbFile, bolt.Options{})
			if err != nil {
				b.Fatal(err)
			}
			return db
		}},
		{"redis", func(b *testing.B) store.Backend {
			srv := redistest.Start(b)
			redisPID = srv.PID()
			r, err := redis.Open(context.Background(), srv.URL(), redis.Options{})
			if err != nil {
				b.Fatal(err)
			}
			return r
		}},
	}
	for _, be := range backends {
		b.Run(be.name, func(b *testing.B) {
			var elapsed, listing time.Duration
			var peak uint64
			var cpu, cloudCPU, listingCPU, listingCloudCPU, redisCPU time.Duration
			var gcCycles, gcCPU float64
			var stored int64
			for b.Loop() {
				b.StopTimer()
				self, cloud := processCPU(b, 0), processCPU(b, w.cloudPID)
				listing += listAlone(b, w.url, vms)
				listingCPU += processCPU(b, 0) - self
				listingCloudCPU += processCPU(b, w.cloudPID) - cloud
				store.StartAfresh() // each bootstrap as a process's first
				backend := be.open(b)
				w.t = b
				resetPeakRSS(b)
				self, cloud = processCPU(b, 0), processCPU(b, w.cloudPID)
				var redis0 time.Duration
				if redisPID != 0 {
					redis0 = processCPU(b, redisPID)
				}
				cycles0, gcCPU0 := gcSoFar()
				stopProfile := profileBootstrap(b, be.name)
				stopHeap := heapProfiles(b, be.name)
				stopTimeline := cpuTimeline(b, be.name)
				b.StartTimer()
				start := time.Now()
				w.start(s, backend)
				w.waitFor("the bootstrap", func() bool { return countRecords(w.store) == want && w.p.Idle() })
				elapsed += time.Since(start)
				stopProfile()
				stopHeap()
				stopTimeline()
				b.StopTimer()
				cpu += processCPU(b, 0) - self
				cloudCPU += processCPU(b, w.cloudPID) - cloud
				if redisPID != 0 {
					redisCPU += processCPU(b, redisPID) - redis0
				}
				cycles1, gcCPU1 := gcSoFar()
				gcCycles, gcCPU = gcCycles+cycles1-cycles0, gcCPU+gcCPU1-gcCPU0
				peak = max(peak, peakRSS(b))
				if f := os.Getenv("BOOTSTRAP_LOG"); f != "" {
					if err := os.WriteFile(f+"."+be.name, []byte(w.logs.String()), 0o644); err != nil {
						b.Fatal(err)
					}
				}
				w.stop()
				backend.Close()
				if be.name == "embedded" {
					fi, err := os.Stat(dbFile)
					if err != nil {
						b.Fatal(err)
					}
					stored = max(stored, fi.Size())
				}
				b.StartTimer()
			}
			per := elapsed.Seconds() / float64(b.N)
			b.ReportMetric(float64(vms)/per, "vms/s")
			b.ReportMetric(float64(want), "records")
			b.ReportMetric(per, "s/bootstrap")
			b.ReportMetric(listing.Seconds()/float64(b.N), "s/listing")
			b.ReportMetric(elapsed.Seconds()/listing.Seconds(), "x-listing")
			b.ReportMetric(float64(peak)/(1<<20), "peak-MB")
			n := float64(b.N)
			b.ReportMetric(cpu.Seconds()/n, "cnsd-cpu-s")
			b.ReportMetric(cloudCPU.Seconds()/n, "cloud-cpu-s")
			b.ReportMetric(listingCPU.Seconds()/n, "listing-cnsd-cpu-s")
			b.ReportMetric(listingCloudCPU.Seconds()/n, "listing-cloud-cpu-s")
			if redisCPU > 0 {
				b.ReportMetric(redisCPU.Seconds()/n, "redis-cpu-s")
			}
			b.ReportMetric(gcCycles/n, "gc-cycles")
			b.ReportMetric(gcCPU/n, "gc-cpu-s")
			if stored > 0 {
				b.ReportMetric(float64(stored)/(1<<20), "store-MB")
			}
		})
	}
}

// bootstrapWorld starts the cloud generated by o in a process of its
// own and computes from the same fixture the settings the benchmark
// names by and how many records they give. Nothing here keeps the fixture:
// the heap cnsd's collector marks during the bootstrap is cnsd's.
func bootstrapWorld(b *testing.B, o mockcloud.GenOptions) (*world, Settings, int) {
	f := mockcloud.Generate(o)
	s := Settings{Naming: zonegen.Config{UseAlias: true, UseLogin: true, Zones: []zonegen.ZoneConfig{
		{Name: "pub.example.com", Networks: []string{f.NetworkPools[0].UUID}},
		{Name: "dc1.cns.example.com", Networks: []string{"*"}},
	}}}
	w := newCloudProcess(b, f)
	w.level, w.limit, w.poll = slog.LevelInfo, 3*time.Minute, feed.DefaultCNAPIPollInterval
	want := 0
	for _, recs := range oracle(b, f, s, w.clock.Now()) {
		want += len(recs)
	}
	return w, s, want
}

// listAlone times one VMAPI listing of the cloud at url, then collects
// its garbage so that the bootstrap after it starts clean.
func listAlone(b *testing.B, url string, vms int) time.Duration {
	start := time.Now()
	l, err := feed.NewVMAPI(feed.VMAPIConfig{URL: url, Instance: "5e1f0c36-0000-4000-8000-0000000000b1"}, nil).List(b.Context())
	took := time.Since(start)
	if err != nil {
		b.Fatal(err)
	}
	if len(l.VMs)+len(l.Unreadable) == 0 || len(l.VMs) > vms {
		b.Fatalf("listing alone: %d VMs of %d", len(l.VMs), vms)
	}
	runtime.GC()
	return took
}

// profileBootstrap starts a CPU profile of one bootstrap when
// BOOTSTRAP_CPUPROFILE is set, and returns what stops it.
func profileBootstrap(b *testing.B, backend string) (stop func()) {
	path := os.Getenv("BOOTSTRAP_CPUPROFILE")
	if path == "" {
		return func() {}
	}
	f, err := os.Create(path + "." + backend)
	if err != nil {
		b.Fatal(err)
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		b.Fatal(err)
	}
	return func() {
		pprof.StopCPUProfile()
		if err := f.Close(); err != nil {
			b.Fatal(err)
		}
	}
}

// heapProfiles writes a heap profile now and another when stop is
// called, when BOOTSTRAP_MEMPROFILE is set.
func heapProfiles(b *testing.B, backend string) (stop func()) {
	path := os.Getenv("BOOTSTRAP_MEMPROFILE")
	if path == "" {
		return func() {}
	}
	write := func(suffix string) {
		f, err := os.Create(path + "." + backend + "." + suffix)
		if err != nil {
			b.Fatal(err)
		}
		if err := pprof.Lookup("allocs").WriteTo(f, 0); err != nil {
			b.Fatal(err)
		}
		if err := f.Close(); err != nil {
			b.Fatal(err)
		}
	}
	// A profile holds what was allocated up to the last collection.
	runtime.GC()
	write("start")
	return func() {
		runtime.GC()
		write("end")
	}
}

// resetPeakRSS starts the process's peak resident memory (VmHWM) again
// from what it holds now; runtime.GC first, so that the garbage of what
// came before does not count.
func resetPeakRSS(b *testing.B) {
	runtime.GC()
	debug.FreeOSMemory()
	if err := os.WriteFile("/proc/self/clear_refs", []byte("5"), 0); err != nil {
		b.Fatalf("reset the peak resident memory: %v", err)
	}
}

// peakRSS is the process's peak resident memory since resetPeakRSS, in
// bytes.
func peakRSS(b *testing.B) uint64 {
	status, err := os.ReadFile("/proc/self/status")
	if err != nil {
		b.Fatal(err)
	}
	for line := range strings.Lines(string(status)) {
		if rest, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			kb, err := strconv.ParseUint(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 10, 64)
			if err != nil {
				b.Fatalf("VmHWM: %q: %v", rest, err)
			}
			return kb << 10
		}
	}
	b.Fatal("no VmHWM in /proc/self/status")
	return 0
}

// processCPU is the user and system CPU time process pid (0: this one)
// has taken so far, all its threads, from /proc/<pid>/stat (in the
// kernel's clock ticks, 100 a second on Linux).
func processCPU(b *testing.B, pid int) time.Duration {
	path := "/proc/self/stat"
	if pid != 0 {
		path = "/proc/" + strconv.Itoa(pid) + "/stat"
	}
	_, ticks, err := statTicks(path)
	if err != nil {
		b.Fatal(err)
	}
	return time.Duration(ticks) * (time.Second / 100)
}

// statTicks reads a process's command name and its user and system CPU
// in clock ticks from its stat file.
func statTicks(path string) (name string, ticks uint64, err error) {
	stat, err := os.ReadFile(path)
	if err != nil {
		return "", 0, err
	}
	// The command name, in parentheses, may hold spaces: fields are
	// counted from after its closing one (field 3, the state, first).
	head, rest, ok := strings.Cut(string(stat), ") ")
	_, name, _ = strings.Cut(head, "(")
	fs := strings.Fields(rest)
	if !ok || len(fs) < 13 {
		return "", 0, fmt.Errorf("%s: %q", path, stat)
	}
	for _, f := range fs[11:13] { // utime, stime: fields 14 and 15
		v, err := strconv.ParseUint(f, 10, 64)
		if err != nil {
			return "", 0, fmt.Errorf("%s: %q: %v", path, f, err)
		}
		ticks += v
	}
	return name, ticks, nil
}

// gcSoFar is how many collections this process has run and the CPU
// they took, in seconds (the idle-priority marking, which only fills
// otherwise idle cores, left out).
func gcSoFar() (cycles, cpu float64) {
	s := []metrics.Sample{{Name: "/gc/cycles/total:gc-cycles"}, {Name: "/cpu/classes/gc/total:cpu-seconds"},
		{Name: "/cpu/classes/gc/mark/idle:cpu-seconds"}}
	metrics.Read(s)
	return float64(s[0].Value.Uint64()), s[1].Value.Float64() - s[2].Value.Float64()
}

// countRecords counts the records st serves, cheaply enough to ask often
// while a bootstrap runs (the world writes no records but the VMs').
func countRecords(st *store.Store) int {
	n := 0
	for _, zone := range st.Zones() {
		if snap := st.Snapshot(zone); snap != nil {
			n += snap.Len()
		}
	}
	return n
}

// cpuTimeline, with BOOTSTRAP_TIMELINE=path, writes to path.<backend>
// the CPU every process on the machine took in each tenth of a second
// of the bootstrap, one line a tick: milliseconds since the start, then
// name=milliseconds for each process that ran (cnsd is the test
// binary). It shows what one profile cannot: when a core stood idle,
// and what else (slapd, the cloud) had the cores cnsd waited for.
func cpuTimeline(b *testing.B, backend string) (stop func()) {
	path := os.Getenv("BOOTSTRAP_TIMELINE")
	if path == "" {
		return func() {}
	}
	done, finished := make(chan struct{}), make(chan struct{})
	var out strings.Builder
	go func() {
		defer close(finished)
		start, last := time.Now(), processTicks()
		tick := time.NewTicker(100 * time.Millisecond)
		defer tick.Stop()
		for {
			select {
			case <-done:
				return
			case <-tick.C:
			}
			now := processTicks()
			fmt.Fprintf(&out, "%d", time.Since(start).Milliseconds())
			for pid, t := range now {
				// A pid taken by a new process since counts from zero.
				if was := last[pid]; was.name != t.name || was.ticks > t.ticks {
					last[pid] = procCPU{}
				}
				if d := t.ticks - last[pid].ticks; d > 0 {
					fmt.Fprintf(&out, " %s=%d", t.name, d*10)
				}
			}
			out.WriteByte('\n')
			last = now
		}
	}()
	return func() {
		close(done)
		<-finished
		if err := os.WriteFile(path+"."+backend, []byte(out.String()), 0o644); err != nil {
			b.Fatal(err)
		}
	}
}

// procCPU is a process's command name and the user and system CPU it
// has taken, in clock ticks of 10 ms.
type procCPU struct {
	name  string
	ticks uint64
}

// processTicks is the CPU every process /proc shows has taken, by pid;
// processes that go away in between are skipped.
func processTicks() map[int]procCPU {
	out := map[int]procCPU{}
	ents, _ := os.ReadDir("/proc")
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		if name, ticks, err := statTicks("/proc/" + e.Name() + "/stat"); err == nil {
			out[pid] = procCPU{name, ticks}
		}
	}
	return out
}
