package knotbench

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"testing"
)

var recordsFlag = flag.String("knotbench.records", "100000,1000000",
	"comma-separated zone sizes (records) of the benchmarks; 10000 under -short")

func TestMain(m *testing.M) {
	ChildMain()
	code := m.Run()
	stopAll()
	os.Exit(code)
}

// sizes are the zone sizes the benchmarks run.
func sizes(tb testing.TB) []int {
	spec := *recordsFlag
	if testing.Short() {
		spec = "10000"
	}
	var out []int
	for _, f := range strings.Split(spec, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || n < 10 {
			tb.Fatalf("-knotbench.records: bad size %q", f)
		}
		out = append(out, n)
	}
	return out
}

// A pair is cnsd and Knot serving the same zone of records records.
type pair struct {
	records int
	dir     string
	cnsd    *Server
	knot    *Server
	nsd     *Server // started by withNSD, for the dnsperf benchmark
	// ixfrFrom is the serial of cnsd and of Knot before the changes
	// of the IXFR benchmark, once made (changed).
	ixfrFrom *[2]uint32
}

func (p *pair) servers() []*Server { return []*Server{p.cnsd, p.knot} }

// withNSD starts NSD on the pair's zone file the first time, and returns
// the three servers. Without nsd it skips tb.
func (p *pair) withNSD(tb testing.TB) []*Server {
	tb.Helper()
	pairsMu.Lock()
	defer pairsMu.Unlock()
	if p.nsd == nil {
		bin, err := FindNSD()
		if err != nil {
			if os.Getenv("CNSD_REQUIRE_SECONDARIES") != "" {
				tb.Fatalf("knotbench: %v", err)
			}
			tb.Skipf("knotbench: %v; set CNSD_REQUIRE_SECONDARIES=1 to make this a failure", err)
		}
		if p.nsd, err = StartNSD(bin, p.dir, filepath.Join(p.dir, "zone.db")); err != nil {
			tb.Fatalf("knotbench: %v", err)
		}
		tb.Logf("%s on %s", NSDVersion(bin), p.nsd.UDP)
	}
	return []*Server{p.cnsd, p.knot, p.nsd}
}

// references returns cnsd and the reference servers: Knot, and NSD
// (started the first time) when it is installed; without it the
// comparison is with Knot alone.
func (p *pair) references(tb testing.TB) []*Server {
	tb.Helper()
	if _, err := FindNSD(); err != nil {
		tb.Logf("knotbench: %v; comparing with Knot only", err)
		return p.servers()
	}
	return p.withNSD(tb)
}

func (p *pair) stop() {
	for _, s := range []*Server{p.cnsd, p.knot, p.nsd} {
		if s != nil {
			s.Stop()
		}
	}
	os.RemoveAll(p.dir)
}

// pairs are shared by every benchmark of a size: starting the servers on
// a zone of 1M records takes longer than the measurements.
var (
	pairsMu sync.Mutex
	pairs   = map[int]*pair{}
)

// setup returns the running pair for a zone of n records, starting it
// the first time; TestMain stops them all. Without knotd it skips tb.
func setup(tb testing.TB, n int) *pair {
	tb.Helper()
	bin, err := FindKnotd()
	if err != nil {
		if os.Getenv("CNSD_REQUIRE_SECONDARIES") != "" {
			tb.Fatalf("knotbench: %v", err)
		}
		tb.Skipf("knotbench: %v; set CNSD_REQUIRE_SECONDARIES=1 to make this a failure", err)
	}
	pairsMu.Lock()
	defer pairsMu.Unlock()
	if p := pairs[n]; p != nil {
		return p
	}
	p, err := startPair(bin, n)
	if err != nil {
		tb.Fatalf("knotbench: %v", err)
	}
	pairs[n] = p
	tb.Logf("zone of %d records: cnsd (%s, GOMAXPROCS %d) on udp %s tcp %s; %s on %s",
		n, runtime.Version(), runtime.GOMAXPROCS(0), p.cnsd.UDP, p.cnsd.TCP, KnotdVersion(bin), p.knot.UDP)
	return p
}

func startPair(bin string, n int) (_ *pair, err error) {
	dir, err := os.MkdirTemp("", "knotbench")
	if err != nil {
		return nil, err
	}
	p := &pair{records: n, dir: dir}
	defer func() {
		if err != nil {
			p.stop()
		}
	}()
	if p.cnsd, err = StartCnsd(n); err != nil {
		return nil, err
	}
	apex, err := Apex(p.cnsd.UDP)
	if err != nil {
		return nil, fmt.Errorf("cnsd: %w", err)
	}
	zonefile := filepath.Join(dir, "zone.db")
	f, err := os.Create(zonefile)
	if err != nil {
		return nil, err
	}
	err = WriteZoneFile(f, n, apex)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return nil, err
	}
	if p.knot, err = StartKnot(bin, dir, zonefile); err != nil {
		return nil, err
	}
	return p, nil
}

func stopAll() {
	pairsMu.Lock()
	defer pairsMu.Unlock()
	for n, p := range pairs {
		p.stop()
		delete(pairs, n)
	}
}
