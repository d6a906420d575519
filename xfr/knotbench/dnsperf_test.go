package knotbench

import (
	"bufio"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/miekg/dns"
)

var (
	dnsperfSeconds = flag.Int("knotbench.dnsperf-seconds", 10, "seconds each dnsperf run lasts; 1 under -short")
	dnsperfRate    = flag.Int("knotbench.dnsperf-rate", 0,
		"queries/s of the fixed-rate dnsperf runs; 0 picks half the lowest top rate of the three servers on that transport")
	dnsperfShare = flag.Float64("knotbench.dnsperf-share", 0,
		"when above 0 (and no -knotbench.dnsperf-rate), the fixed rate is this share of cnsd's own top rate on that transport, e.g. 0.6")
	dnsperfFixedSeconds = flag.Int("knotbench.dnsperf-fixed-seconds", 0,
		"seconds each fixed-rate dnsperf run lasts; 0 is -knotbench.dnsperf-seconds")
	dnsperfTransports = flag.String("knotbench.dnsperf-transports", "udp,tcp",
		"the transports BenchmarkDNSPerf loads, comma-separated: to compare versions on one of them in half the time")
)

// dnsperfClients is the sockets (UDP) or connections (TCP) dnsperf
// spreads its queries over, and dnsperfOutstanding how many queries it
// keeps in flight in all: on TCP, pipelined on those connections.
const (
	dnsperfClients     = 8
	dnsperfOutstanding = 200
)

// BenchmarkDNSPerf loads cnsd, Knot and NSD serving the same zone with
// dnsperf (the Debian package dnsperf), over UDP and over TCP: first as
// fast as each answers (queries/s, server CPU per query, queries lost),
// then at one fixed rate all three sustain (queries lost). It logs a
// table per transport with the ratios cnsd/Knot and cnsd/NSD. Each
// iteration is one such run; use -benchtime 1x.
//
//	go test ./xfr/knotbench -run '^$' -bench DNSPerf -benchtime 1x -v -knotbench.records 100000
func BenchmarkDNSPerf(b *testing.B) {
	bin, err := exec.LookPath("dnsperf")
	if err != nil {
		b.Skip(`knotbench: dnsperf not found on PATH; install the Debian package "dnsperf"`)
	}
	if testing.Short() {
		*dnsperfSeconds = 1 // bench-smoke: that it works, not what it measures
		*dnsperfFixedSeconds = 1
	}
	if *dnsperfFixedSeconds <= 0 {
		*dnsperfFixedSeconds = *dnsperfSeconds
	}
	n := sizes(b)[0]
	p := setup(b, n)
	servers := p.withNSD(b)
	qfile := filepath.Join(p.dir, "dnsperf.txt")
	if err := writeQueryFile(qfile, Queries(n, 1<<16)); err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		for _, transport := range strings.Split(*dnsperfTransports, ",") {
			if transport != "udp" && transport != "tcp" {
				b.Fatalf("-knotbench.dnsperf-transports: %q is neither udp nor tcp", transport)
			}
			top := make([]perfResult, len(servers))
			for i, s := range servers {
				top[i] = runDNSPerf(b, bin, s, transport, qfile, 0, *dnsperfSeconds)
			}
			rate := *dnsperfRate
			if rate <= 0 && *dnsperfShare > 0 {
				rate = max(int(top[0].qps*(*dnsperfShare)), 1000) // servers[0] is cnsd
			}
			if rate <= 0 {
				lowest := top[0].qps
				for _, r := range top {
					lowest = min(lowest, r.qps)
				}
				rate = max(int(lowest/2)/1000*1000, 1000)
			}
			fixed := make([]perfResult, len(servers))
			for i, s := range servers {
				fixed[i] = runDNSPerf(b, bin, s, transport, qfile, rate, *dnsperfFixedSeconds)
			}
			logPerf(b, transport, n, servers, top, fixed, rate)
		}
	}
}

// writeQueryFile writes qs in dnsperf's input format, a name and a type
// a line.
func writeQueryFile(path string, qs []Query) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	w := bufio.NewWriter(f)
	for _, q := range qs {
		fmt.Fprintf(w, "%s %s\n", q.Name, dns.TypeToString[q.Type])
	}
	if err := w.Flush(); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// perfResult is one dnsperf run against one server.
type perfResult struct {
	sent, completed, lost int64
	qps                   float64
	cpu                   time.Duration // the server's, over the run
	rcodes                string
}

// cpuPerQuery is the server's CPU time per query answered.
func (r perfResult) cpuPerQuery() time.Duration {
	if r.completed == 0 {
		return 0
	}
	return r.cpu / time.Duration(r.completed)
}

var (
	perfSent      = regexp.MustCompile(`Queries sent:\s+(\d+)`)
	perfCompleted = regexp.MustCompile(`Queries completed:\s+(\d+)`)
	perfLost      = regexp.MustCompile(`Queries lost:\s+(\d+)`)
	perfQPS       = regexp.MustCompile(`Queries per second:\s+([\d.]+)`)
	perfRcodes    = regexp.MustCompile(`Response codes:\s+(.*)`)
)

// runDNSPerf runs dnsperf against s over transport for seconds, limited
// to rate queries/s when rate is above 0, and returns its figures with
// the server's CPU time.
func runDNSPerf(b *testing.B, bin string, s *Server, transport, qfile string, rate, seconds int) perfResult {
	b.Helper()
	addr := s.UDP
	if transport == "tcp" {
		addr = s.TCP // cnsd's TCP port is not its UDP port
	}
	host, port, _ := strings.Cut(addr, ":")
	args := []string{"-s", host, "-p", port, "-m", transport, "-d", qfile, "-e",
		"-c", strconv.Itoa(dnsperfClients), "-q", strconv.Itoa(dnsperfOutstanding),
		"-l", strconv.Itoa(seconds), "-t", "2"}
	if rate > 0 {
		args = append(args, "-Q", strconv.Itoa(rate))
	}
	cpu0 := serverCPU(b, s)
	out, err := exec.Command(bin, args...).CombinedOutput()
	cpu := serverCPU(b, s) - cpu0
	if err != nil {
		b.Fatalf("dnsperf %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	num := func(re *regexp.Regexp) string {
		m := re.FindSubmatch(out)
		if m == nil {
			b.Fatalf("dnsperf output without %s:\n%s", re, out)
		}
		return string(m[1])
	}
	atoi := func(re *regexp.Regexp) int64 {
		n, _ := strconv.ParseInt(num(re), 10, 64)
		return n
	}
	r := perfResult{sent: atoi(perfSent), completed: atoi(perfCompleted), lost: atoi(perfLost), cpu: cpu,
		rcodes: strings.TrimSpace(num(perfRcodes))}
	r.qps, _ = strconv.ParseFloat(num(perfQPS), 64)
	return r
}

// logPerf logs one transport's table: each server's figures and cnsd's
// over Knot's and NSD's.
func logPerf(b *testing.B, transport string, n int, servers []*Server, top, fixed []perfResult, rate int) {
	var t strings.Builder
	fmt.Fprintf(&t, "dnsperf over %s, zone of %d records, %d %s, %d queries in flight, %d s a run at top rate, %d s at the fixed rate:\n",
		transport, n, dnsperfClients, map[string]string{"udp": "sockets", "tcp": "connections"}[transport],
		dnsperfOutstanding, *dnsperfSeconds, *dnsperfFixedSeconds)
	fmt.Fprintf(&t, "  %-5s %12s %14s %10s %12s | at %d q/s: %8s %8s\n", "", "queries/s", "CPU per query", "lost", "sent", rate, "lost", "sent")
	for i, s := range servers {
		fmt.Fprintf(&t, "  %-5s %12.0f %14v %10d %12d | %20d %8d   rcodes %s\n", s.Name, top[i].qps,
			top[i].cpuPerQuery(), top[i].lost, top[i].sent, fixed[i].lost, fixed[i].sent, top[i].rcodes)
	}
	for i := 1; i < len(servers); i++ {
		cpuRatio := 0.0
		if c := top[i].cpuPerQuery(); c > 0 {
			cpuRatio = float64(top[0].cpuPerQuery()) / float64(c)
		}
		fmt.Fprintf(&t, "  cnsd/%s: queries/s %.2f, CPU per query %.2f\n", servers[i].Name, top[0].qps/top[i].qps, cpuRatio)
		b.ReportMetric(top[0].qps/top[i].qps, transport+"-qps-cnsd/"+servers[i].Name)
	}
	b.ReportMetric(float64(fixed[0].lost), transport+"-lost-at-rate-cnsd")
	b.Log(t.String())
}
