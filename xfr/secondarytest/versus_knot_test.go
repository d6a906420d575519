package secondarytest_test

import (
	"bufio"
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/miekg/dns"

	"github.com/cnsd/cnsd/schema"
	"github.com/cnsd/cnsd/store"
	"github.com/cnsd/cnsd/xfr"
	"github.com/cnsd/cnsd/xfr/secondarytest"
)

// benchServeEnv makes the test binary a cnsd DNS server over a generated
// zone of that many records instead of running tests: the comparison
// with Knot reads the server's CPU time from /proc, apart from the
// client's.
const benchServeEnv = "CNSD_BENCH_SERVE_RECORDS"

const benchZone = "bench.cnsd.test."

func TestMain(m *testing.M) {
	if n := os.Getenv(benchServeEnv); n != "" {
		os.Exit(benchServe(n))
	}
	os.Exit(m.Run())
}

// benchName is the i-th instance name of the generated zone.
func benchName(i int) string {
	return fmt.Sprintf("%08x-4b6e-4c8a-9d2f-%012x.inst.%s", i, i, benchZone)
}

// benchRecords is a zone shaped like cnsd's: per instance an A record
// and a TXT record with its UUID.
func benchRecords(n int) []store.Record {
	recs := make([]store.Record, 0, n)
	for i := range n / 2 {
		recs = append(recs, rec(benchName(i), dns.TypeA, fmt.Sprintf("10.%d.%d.%d", i>>16&255, i>>8&255, i&255)),
			rec(benchName(i), dns.TypeTXT, fmt.Sprintf(`"%08x-4b6e-4c8a-9d2f-%012x"`, i, i)))
	}
	return recs
}

// benchServe runs the server until SIGTERM, printing its address first.
func benchServe(records string) int {
	n, err := strconv.Atoi(records)
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM)
	defer stop()
	st, oerr := store.Open(ctx, store.NewMemory(), store.Options{}, nil)
	if err != nil || oerr != nil {
		fmt.Fprintln(os.Stderr, "bench server:", err, oerr)
		return 2
	}
	if _, err := st.CommitSource(ctx, source, map[string][]store.Record{benchZone: benchRecords(n)}); err != nil {
		fmt.Fprintln(os.Stderr, "bench server:", err)
		return 2
	}
	cfg, err := schema.Parse([]byte(`{"my_name": "ns1.cnsd.test", "hostmaster": "hostmaster@cnsd.test",
		"forward_zones": {"bench.cnsd.test": {"networks": ["*"]}}}`))
	if err != nil {
		fmt.Fprintln(os.Stderr, "bench server:", err)
		return 2
	}
	pc, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		fmt.Fprintln(os.Stderr, "bench server:", err)
		return 2
	}
	l, err := net.Listen("tcp", pc.LocalAddr().String())
	if err != nil {
		fmt.Fprintln(os.Stderr, "bench server:", err)
		return 2
	}
	srv := xfr.New(cfg, st, xfr.Options{PacketConns: []net.PacketConn{pc}, Listeners: []net.Listener{l}}, nil)
	fmt.Println(pc.LocalAddr())
	if err := srv.Run(ctx); err != nil && ctx.Err() == nil {
		fmt.Fprintln(os.Stderr, "bench server:", err)
		return 1
	}
	return 0
}

// benchServer is a server under comparison.
type benchServer struct {
	name string
	addr string
	pid  int
}

// startCNSDProcess starts the test binary as a cnsd server of records.
func startCNSDProcess(b *testing.B, records int) benchServer {
	cmd := exec.Command(os.Args[0])
	cmd.Env = append(os.Environ(), fmt.Sprintf("%s=%d", benchServeEnv, records))
	cmd.Stderr = os.Stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		b.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = cmd.Process.Signal(syscall.SIGTERM); _ = cmd.Wait() })
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil {
		b.Fatalf("cnsd bench server: %v", err)
	}
	return benchServer{name: "cnsd", addr: strings.TrimSpace(line), pid: cmd.Process.Pid}
}

// writeZoneFile writes the generated zone as Knot loads it.
func writeZoneFile(b *testing.B, records int) string {
	path := filepath.Join(b.TempDir(), "bench.zone")
	f, err := os.Create(path)
	if err != nil {
		b.Fatal(err)
	}
	w := bufio.NewWriter(f)
	fmt.Fprintf(w, "%s 3600 IN SOA ns1.cnsd.test. hostmaster.cnsd.test. 1 3600 600 604800 60\n", benchZone)
	fmt.Fprintf(w, "%s 3600 IN NS ns1.cnsd.test.\n", benchZone)
	for _, r := range benchRecords(records) {
		fmt.Fprintf(w, "%s 30 IN %s %s\n", r.Name, dns.Type(r.Type), r.Data)
	}
	if err := w.Flush(); err != nil {
		b.Fatal(err)
	}
	if err := f.Close(); err != nil {
		b.Fatal(err)
	}
	return path
}

// cpuTime is the user and system CPU time the process has used, from
// /proc/PID/stat (fields 14 and 15, in clock ticks of 1/100 s on Linux).
func cpuTime(b *testing.B, pid int) time.Duration {
	raw, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		b.Fatal(err)
	}
	f := strings.Fields(string(raw[strings.LastIndexByte(string(raw), ')')+2:]))
	utime, _ := strconv.ParseInt(f[11], 10, 64)
	stime, _ := strconv.ParseInt(f[12], 10, 64)
	return time.Duration(utime+stime) * 10 * time.Millisecond
}

// BenchmarkVersusKnot serves one generated zone from cnsd and from knotd
// (loaded from a zone file) and measures, per server, the CPU time the
// server process spends on one AXFR and on one query. The ratios are
// cnsd's figure over Knot's.
func BenchmarkVersusKnot(b *testing.B) {
	for _, records := range []int{100_000, 1_000_000} {
		b.Run(fmt.Sprintf("records=%d", records), func(b *testing.B) {
			if records > 100_000 && testing.Short() {
				b.Skip("1M records: not under -short")
			}
			knot := secondarytest.StartKnotPrimary(b, benchZone, writeZoneFile(b, records))
			knot.WaitSerial(b, benchZone, 1, 5*time.Minute)
			servers := []benchServer{startCNSDProcess(b, records),
				{name: "knot", addr: knot.Addr().String(), pid: knot.PID()}}
			const queries = 20_000
			axfrCPU, queryCPU := map[string]time.Duration{}, map[string]time.Duration{}
			for b.Loop() {
				for _, s := range servers {
					before := cpuTime(b, s.pid)
					if n := benchAXFR(b, s.addr); n != records+3 {
						b.Fatalf("%s AXFR: %d records, want %d", s.name, n, records+3)
					}
					mid := cpuTime(b, s.pid)
					benchQueries(b, s.addr, records, queries)
					axfrCPU[s.name] += mid - before
					queryCPU[s.name] += cpuTime(b, s.pid) - mid
				}
			}
			n := float64(b.N)
			for _, s := range servers {
				b.ReportMetric(float64(axfrCPU[s.name].Milliseconds())/n, s.name+"-axfr-cpu-ms")
				b.ReportMetric(float64(queryCPU[s.name].Nanoseconds())/n/queries, s.name+"-query-cpu-ns")
			}
			b.ReportMetric(float64(axfrCPU["cnsd"])/float64(axfrCPU["knot"]), "axfr-cpu-ratio")
			b.ReportMetric(float64(queryCPU["cnsd"])/float64(queryCPU["knot"]), "query-cpu-ratio")
		})
	}
}

// benchAXFR transfers the zone and returns the records received.
func benchAXFR(b *testing.B, addr string) int {
	m := new(dns.Msg)
	m.SetAxfr(benchZone)
	ch, err := (&dns.Transfer{}).In(m, addr)
	if err != nil {
		b.Fatal(err)
	}
	n := 0
	for env := range ch {
		if env.Error != nil {
			b.Fatal(env.Error)
		}
		n += len(env.RR)
	}
	return n
}

// benchQueries sends total UDP queries from 4 clients, each on one
// socket: a third each A and TXT of existing names and names that do not
// exist.
func benchQueries(b *testing.B, addr string, records, total int) {
	var wg sync.WaitGroup
	for w := range 4 {
		wg.Go(func() {
			conn, err := dns.Dial("udp", addr)
			if err != nil {
				b.Error(err)
				return
			}
			defer conn.Close()
			c := &dns.Client{Timeout: 2 * time.Second}
			for i := w; i < total; i += 4 {
				name, qtype := benchName(i*7919%(records/2)), dns.TypeA
				switch i % 3 {
				case 1:
					qtype = dns.TypeTXT
				case 2:
					name = "missing-" + name
				}
				m := new(dns.Msg)
				m.SetQuestion(name, qtype)
				if _, _, err := c.ExchangeWithConn(m, conn); err != nil {
					b.Error(err)
					return
				}
			}
		})
	}
	wg.Wait()
}
