package store

import (
	"context"
	"fmt"
	"math/rand"
	"runtime"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/cnsd/cnsd/zonegen"
)

// benchVM is VM i's contribution: nine records in one of fwdZones
// forward zones (one TXT record at a name shared with nine other VMs
// changes with gen) and a PTR record in a
// reverse zone — ten per VM, ~1M records for 100k VMs.
func benchVM(i, gen, fwdZones int) zonegen.Contribution {
	vm := fmt.Sprintf("%08x-0000-4000-8000-%012x", i, i)
	fwd := fmt.Sprintf("z%d.example.com.", i%fwdZones)
	addr := fmt.Sprintf("10.%d.%d.%d", (i>>16)&255, (i>>8)&255, i&255)
	var recs []Record
	for j := range 8 {
		recs = append(recs, Record{Name: fmt.Sprintf("n%d-%d.%s", i, j, fwd), Type: zonegen.TypeA, Data: addr, Source: vm})
	}
	recs = append(recs, Record{Name: fmt.Sprintf("svc%d.%s", i/10, fwd), Type: zonegen.TypeTXT, Data: fmt.Sprintf("\"%d-%d\"", i, gen), Source: vm})
	rev := fmt.Sprintf("%d.10.in-addr.arpa.", (i>>16)&255)
	ptr := Record{Name: fmt.Sprintf("%d.%d.%s", i&255, (i>>8)&255, rev), Type: zonegen.TypePTR, Data: fmt.Sprintf("n%d-0.%s", i, fwd), Source: vm}
	return contrib(vm, map[string][]Record{fwd: recs, rev: {ptr}})
}

// benchVMs is how many VMs the store's benchmarks hold: 100k, the size
// the figures in docs/BENCHMARKS.md are for, or 10k with -short, where
// make bench-smoke only checks that they run.
func benchVMs() int {
	if testing.Short() {
		return 10_000
	}
	return 100_000
}

// bigStore is a Store over Memory holding n VMs, committed in one batch.
func bigStore(b *testing.B, n, fwdZones int) *Store {
	s, _ := open(b, NewMemory(), Options{})
	batch := make([]zonegen.Contribution, n)
	for i := range batch {
		batch[i] = benchVM(i, 0, fwdZones)
	}
	commit(b, s, batch...)
	return s
}

// BenchmarkCommitOneVM commits one VM's changed contribution to a store
// of 100k VMs (~1M records): the cost of one feed change. With one
// forward zone that zone holds 900k records.
func BenchmarkCommitOneVM(b *testing.B) {
	for _, fwd := range []int{4, 1} {
		b.Run(fmt.Sprintf("fwdzones=%d", fwd), func(b *testing.B) {
			n := benchVMs()
			s := bigStore(b, n, fwd)
			total := 0
			for _, z := range s.Zones() {
				total += s.Snapshot(z).Len()
			}
			b.ReportMetric(float64(total), "records")
			// Two generations of the same 4096 VMs, alternated, so that
			// every commit changes one record and building the
			// contributions stays out of the timing.
			var gens [2][4096]zonegen.Contribution
			for g := range gens {
				for k := range gens[g] {
					gens[g][k] = benchVM(k*(n/4096), g+1, fwd)
				}
			}
			ctx := context.Background()
			runtime.GC() // the bootstrap's garbage is not the commit's cost
			b.ReportAllocs()
			for i := 0; b.Loop(); i++ {
				c := gens[(i/4096)%2][i%4096]
				if _, err := s.Commit(ctx, []zonegen.Contribution{c}); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkSnapshotLookup looks names up in a 1M-record zone snapshot.
func BenchmarkSnapshotLookup(b *testing.B) {
	n := benchVMs()
	s := bigStore(b, n, 4)
	snap := s.Snapshot("z0.example.com.")
	names := make([]string, 1024)
	for i := range names {
		names[i] = fmt.Sprintf("n%d-3.z0.example.com.", (i*97)%(n/4)*4)
	}
	runtime.GC()
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		if len(snap.Lookup(names[i%len(names)])) != 1 {
			b.Fatal("lookup missed")
		}
	}
}

// BenchmarkCommitBootstrap commits 100k VMs (~1M records, one forward
// zone of 900k and the reverse zones) to an empty store over Memory in
// one batch: the store core's share of a first start (planning, building
// the snapshots and their diffs), without a backend's writing.
func BenchmarkCommitBootstrap(b *testing.B) {
	benchBootstrap(b, func(i int) zonegen.Contribution { return benchVM(i, 0, 1) }, 10)
}

// benchBootstrap commits benchVMs() VMs, vm(i) the i-th, of perVM
// records each, to an empty store over Memory in one batch.
func benchBootstrap(b *testing.B, vm func(i int) zonegen.Contribution, perVM int) {
	benchBootstrapAfter(b, 0, vm, perVM)
}

// benchBootstrapAfter is benchBootstrap into a store that holds nodes
// sources already (vm(n), … after the n VMs), committed before the
// clock starts.
func benchBootstrapAfter(b *testing.B, nodes int, vm func(i int) zonegen.Contribution, perVM int) {
	n := benchVMs()
	batch := make([]zonegen.Contribution, n)
	for i := range batch {
		batch[i] = vm(i)
	}
	before := make([]zonegen.Contribution, nodes)
	for i := range before {
		before[i] = vm(n + i)
	}
	ctx := context.Background()
	runtime.GC()
	cpu := cpuTime(b)
	for b.Loop() {
		b.StopTimer()
		s, _ := open(b, NewMemory(), Options{})
		if len(before) > 0 {
			if _, err := s.Commit(ctx, before); err != nil {
				b.Fatal(err)
			}
		}
		b.StartTimer()
		// As the Batcher commits: the diffs' records are not listed
		// unless the journal keeps them.
		if _, _, err := s.commitRecorded(ctx, batch); err != nil {
			b.Fatal(err)
		}
	}
	reportCPU(b, cpu)
	b.ReportMetric(float64(n*perVM), "records")
}

// BenchmarkCommitBootstrapAfterNodes is BenchmarkCommitBootstrap into
// zones that already hold a hundred sources' records, as cnsd's do when
// the compute nodes' names are committed before the VMs' listing is
// evaluated: a large commit into a small zone.
func BenchmarkCommitBootstrapAfterNodes(b *testing.B) {
	benchBootstrapAfter(b, 100, func(i int) zonegen.Contribution { return benchVM(i, 0, 1) }, 10)
}

// BenchmarkNameTreeGet looks up names shaped like cnsd's instance names
// (<vm uuid>.inst.<account uuid>.<zone>, a hundred accounts) in a tree of
// 1M of them, in an order that defeats the CPU caches, as the misses of
// a DNS server's answer cache do.
func BenchmarkNameTreeGet(b *testing.B) {
	const n = 1 << 20
	names := make([]string, n)
	for i := range names {
		names[i] = fmt.Sprintf("%08x-0000-4000-8000-%012x.inst.%08x-0000-4000-8000-000000000000.cns.bench.test.", i*2654435761%(1<<32), i, i%100)
	}
	slices.SortFunc(names, cmpName)
	nodes := make([]*node, n)
	for i := range nodes {
		nodes[i] = &node{}
	}
	t := buildNameTree(names, nodes)
	queries := slices.Clone(names)
	rand.New(rand.NewSource(1)).Shuffle(len(queries), func(i, j int) { queries[i], queries[j] = queries[j], queries[i] })
	for _, q := range queries { // a server's steady state: every node searched before
		t.Get(q)
	}
	runtime.GC()
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; b.Loop(); i++ {
		if _, ok := t.Get(queries[i%n]); !ok {
			b.Fatal("lookup missed")
		}
	}
}

// BenchmarkTreeDiffSmallOld finds the diff of a zone of a hundred VMs'
// records built again with 100k VMs more, by the walk over every name
// and from the old names (smallDiff).
func BenchmarkTreeDiffSmallOld(b *testing.B) {
	n := benchVMs()
	const zone = "z0.example.com."
	vms := func(from, to int) map[string][]Record {
		m := map[string][]Record{}
		for i := from; i < to; i++ {
			c := benchVM(i, 0, 1)
			if recs := byZone(c)[zone]; len(recs) > 0 {
				m[c.VM] = recs
			}
		}
		return m
	}
	old, added := vms(n, n+100), vms(0, n)
	ob := buildBulk(0, old)
	tree := buildNameTree(ob.names, ob.nodes)
	nb := buildBulk(0, old, added)
	for _, c := range []struct {
		name string
		diff func(*nameTree, bulkNames) ([]Record, []Record)
	}{{"walk", walkDiff}, {"small", smallDiffListed}} {
		b.Run(c.name, func(b *testing.B) {
			runtime.GC()
			for b.Loop() {
				c.diff(tree, nb)
			}
		})
	}
}

// cnsVM is VM i's contribution shaped as cnsd's: in each of two forward
// zones, its instance names <vm uuid>.inst.<account uuid> and
// <alias>.inst.<login>, and the same under two networks'
// prefixes, where a thousand accounts hold a hundred VMs each and two
// VMs of an account share an alias; and a PTR record in a reverse zone.
// The names of an account share its forty bytes after the zone's, which
// an eight-byte prefix does not tell apart.
func cnsVM(i int) zonegen.Contribution {
	h := uint64(i) * 0x9e3779b97f4a7c15
	vm := fmt.Sprintf("%08x-%04x-4%03x-8%03x-%012x", uint32(h>>32), uint16(h>>16), h&0xfff, (h>>12)&0xfff, i)
	acct := i % 1000
	owner := fmt.Sprintf("%08x-0000-4000-8000-%012x", uint32(acct)*2654435761, acct)
	login := fmt.Sprintf("user%d", acct)
	alias := fmt.Sprintf("web%d", (i/1000)%50)
	addr := fmt.Sprintf("10.%d.%d.%d", (i>>16)&255, (i>>8)&255, i&255)
	zones := map[string][]Record{}
	for _, zone := range []string{"dc1.cns.example.com.", "pub.example.com."} {
		var recs []Record
		for _, inst := range []string{vm + ".inst." + owner, alias + ".inst." + login} {
			for _, net := range []string{"", "admin.", "external."} {
				recs = append(recs, Record{Name: net + inst + "." + zone, Type: zonegen.TypeA, Data: addr, Source: vm})
			}
		}
		zones[zone] = recs
	}
	rev := fmt.Sprintf("%d.10.in-addr.arpa.", (i>>16)&255)
	zones[rev] = []Record{{Name: fmt.Sprintf("%d.%d.%s", i&255, (i>>8)&255, rev), Type: zonegen.TypePTR, Data: vm + ".inst." + owner + ".dc1.cns.example.com.", Source: vm}}
	return contrib(vm, zones)
}

// BenchmarkCommitBootstrapCNS is BenchmarkCommitBootstrap with cnsd's
// names (cnsVM): two forward zones of 600k records each, whose names
// share long prefixes once their labels are read from the right.
func BenchmarkCommitBootstrapCNS(b *testing.B) { benchBootstrap(b, cnsVM, 13) }

// BenchmarkCanonicalOrder sorts the first forward zone's names of 100k VMs
// into nameOrder (canonicalOrder): the store benchmarks' names and
// cnsd's (cnsVM).
func BenchmarkCanonicalOrder(b *testing.B) {
	n := benchVMs()
	for _, c := range []struct {
		name string
		vm   func(int) zonegen.Contribution
	}{{"bench", func(i int) zonegen.Contribution { return benchVM(i, 0, 1) }}, {"cns", cnsVM}} {
		b.Run(c.name, func(b *testing.B) {
			var names []string
			for i := range n {
				for _, zr := range c.vm(i).Zones {
					if strings.HasSuffix(zr.Zone, ".example.com.") {
						for _, r := range zr.Records {
							names = append(names, r.Name)
						}
						break
					}
				}
			}
			rand.New(rand.NewSource(1)).Shuffle(len(names), func(i, j int) { names[i], names[j] = names[j], names[i] })
			runtime.GC()
			cpu := cpuTime(b)
			for b.Loop() {
				_, _, _ = canonicalOrder(len(names), func(i int) string { return names[i] })
			}
			reportCPU(b, cpu)
			b.ReportMetric(float64(len(names)), "names")
		})
	}
}

// cpuTime is the user and system CPU time of this process so far: on a
// machine shared with other work a benchmark's CPU per operation
// (reportCPU) moves less than its wall time.
func cpuTime(b *testing.B) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// reportCPU reports the CPU time since start (cpuTime) per operation,
// the collector's included.
func reportCPU(b *testing.B, start time.Duration) {
	b.ReportMetric(float64(cpuTime(b)-start)/float64(b.N), "cpu-ns/op")
}

// BenchmarkPlanBootstrap plans a bootstrap's commit of 100k VMs of
// cnsd's names (cnsVM) into an empty store, the batch sorted by VM as
// the Batcher gives it: the part of a commit before the backend may
// start writing.
func BenchmarkPlanBootstrap(b *testing.B) {
	n := benchVMs()
	batch := make([]zonegen.Contribution, n)
	for i := range batch {
		batch[i] = cnsVM(i)
	}
	batch = sortByVM(batch)
	s, _ := open(b, NewMemory(), Options{})
	runtime.GC()
	cpu := cpuTime(b)
	for b.Loop() {
		s.mu.Lock()
		plans := s.planLocked(*s.zones.Load(), batch)
		s.mu.Unlock()
		if len(plans) == 0 {
			b.Fatal("nothing planned")
		}
	}
	reportCPU(b, cpu)
}
