package store

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"testing"
	"time"

	"github.com/cnsd/cnsd/store/redistest"
)

// churnStore opens a Store over backend holding c's VMs, on c's clock.
func churnStore(b *testing.B, backend Backend, c *vmChurn, opts Options) *Store {
	b.Helper()
	opts.Clock = func() time.Time { return c.now }
	s, err := Open(b.Context(), backend, opts, nil)
	if err != nil {
		b.Fatal(err)
	}
	commit(b, s, c.all()...)
	return s
}

// boltBackend is a bbolt file without fsync: these benchmarks measure
// memory, not the disk.
func boltBackend(b *testing.B) Backend {
	b.Helper()
	return OpenBoltForTest(b, filepath.Join(b.TempDir(), "cnsd.db"), true)
}

// heapAfterGC is the heap in use by live objects after full collections:
// two, since sync.Pool's contents (zonegen's scratch) survive the first.
func heapAfterGC() int {
	runtime.GC()
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return int(m.HeapAlloc)
}

// journalTotals sums what Journal reports over every zone.
func journalTotals(s *Store) (entries, reported int) {
	for _, z := range s.Zones() {
		n, bytes := s.Snapshot(z).Journal()
		entries, reported = entries+n, reported+bytes
	}
	return entries, reported
}

// dropJournals publishes every zone of s again without its journal and
// returns the heap that frees: what the journals really held.
func dropJournals(s *Store) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	set := map[string]*Snapshot{}
	for name, snap := range *s.zones.Load() {
		c := snap.clone()
		c.journal, c.jbytes, c.jdead = nil, 0, 0
		set[name] = c
	}
	before := heapAfterGC()
	s.publishLocked(set)
	return before - heapAfterGC()
}

// BenchmarkJournalHeap compares the heap the journals take with what
// zone_journal_bytes (Snapshot.Journal) reports for them, after enough
// realistic changes to fill them: 10k VMs (1k with -short), 20k changes
// (3k), the default bounds (100 entries, 16 MiB per zone). The heap is
// measured by dropping every journal and collecting.
//
//	go test ./store -run '^$' -bench JournalHeap -benchtime 1x
func BenchmarkJournalHeap(b *testing.B) {
	vms, changes := 10_000, 20_000
	if testing.Short() {
		vms, changes = 1_000, 3_000
	}
	for b.Loop() {
		c := newVMChurn(b, vms, 1)
		s := churnStore(b, boltBackend(b), c, Options{})
		for range changes {
			commit(b, s, c.step()...)
		}
		entries, reported := journalTotals(s)
		heap := dropJournals(s)
		b.ReportMetric(float64(entries), "entries")
		b.ReportMetric(float64(heap)/float64(entries), "heap-B/entry")
		b.ReportMetric(float64(reported)/float64(entries), "metric-B/entry")
		b.ReportMetric(float64(heap)/float64(reported), "heap/metric")
	}
}

// BenchmarkJournalSoak is the writer under realistic VM churn at 50
// changes/s — one commit per change, driven faster than real time — over
// 10k VMs (1k with -short, where the minutes are seconds): the heap in use
// after a full collection and the process's RSS at 5 and 30 simulated
// minutes, and their ratio (the heap at 10 and 20 minutes too, to see
// whether it levels off). A store whose memory follows its journals'
// turnover instead of their bounds grows between the two.
//
//	go test ./store -run '^$' -bench JournalSoak -benchtime 1x
func BenchmarkJournalSoak(b *testing.B) {
	vms, minute := 10_000, 60*50
	if testing.Short() {
		vms, minute = 1_000, 50
	}
	backends := []struct {
		name string
		open func(b *testing.B) Backend
	}{
		{"embedded", boltBackend},
		{"redis", func(b *testing.B) Backend {
			// No fsync: the benchmark measures the writer's memory.
			srv := redistest.Start(b, redistest.WithArgs("--appendfsync", "no"))
			return openRedisAt(b, srv.URL())
		}},
	}
	for _, be := range backends {
		b.Run(be.name, func(b *testing.B) {
			for b.Loop() {
				c := newVMChurn(b, vms, 2)
				s := churnStore(b, be.open(b), c, Options{})
				heap, rss := map[int]int{}, map[int]int{}
				for i := 1; i <= 30*minute; i++ {
					commit(b, s, c.step()...)
					if m := i / minute; i%minute == 0 && (m == 5 || m == 10 || m == 20 || m == 30) {
						heap[m], rss[m] = heapAfterGC(), residentBytes(b)
					}
				}
				_, reported := journalTotals(s)
				b.ReportMetric(float64(heap[5])/(1<<20), "heap-MiB@5m")
				b.ReportMetric(float64(heap[10])/(1<<20), "heap-MiB@10m")
				b.ReportMetric(float64(heap[20])/(1<<20), "heap-MiB@20m")
				b.ReportMetric(float64(heap[30])/(1<<20), "heap-MiB@30m")
				b.ReportMetric(float64(heap[30])/float64(heap[5]), "heap-30m/5m")
				b.ReportMetric(float64(rss[5])/(1<<20), "rss-MiB@5m")
				b.ReportMetric(float64(rss[30])/(1<<20), "rss-MiB@30m")
				b.ReportMetric(float64(rss[30])/float64(rss[5]), "rss-30m/5m")
				b.ReportMetric(float64(reported)/(1<<20), "journal-MiB")
			}
		})
	}
}

// residentBytes is the process's resident set (VmRSS), file-backed pages
// such as bbolt's mapping included.
func residentBytes(b *testing.B) int {
	b.Helper()
	status, err := os.ReadFile("/proc/self/status")
	if err != nil {
		b.Fatal(err)
	}
	sc := bufio.NewScanner(bytes.NewReader(status))
	for sc.Scan() {
		if rest, ok := bytes.CutPrefix(sc.Bytes(), []byte("VmRSS:")); ok {
			kb, err := strconv.Atoi(string(bytes.TrimSpace(bytes.TrimSuffix(bytes.TrimSpace(rest), []byte("kB")))))
			if err != nil {
				b.Fatal(fmt.Errorf("VmRSS %q: %w", rest, err))
			}
			return kb << 10
		}
	}
	b.Fatal("no VmRSS in /proc/self/status")
	return 0
}
