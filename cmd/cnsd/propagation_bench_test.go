package main

import (
	"fmt"
	"net/netip"
	"slices"
	"testing"
	"time"

	"github.com/miekg/dns"

	"github.com/cnsd/cnsd/mockcloud"
	"github.com/cnsd/cnsd/xfr/secondarytest"
)

// propagationGap is the pause between two changes of
// BenchmarkPropagation: each change is isolated, not part of a burst.
const propagationGap = 100 * time.Millisecond

// BenchmarkPropagation measures how long an isolated change takes to be
// answered by a BIND secondary, against the same measure with BIND itself
// as the primary, in one run. For cnsd, a VM's services tag is set in the
// simulated cloud (1,000 VMs, 300 with -short) and the time runs until
// the secondary answers the new service name; for BIND, a DNS UPDATE adds
// a name to its zone and the time runs until the secondary answers it.
// Both secondaries run secondarytest's BIND configuration (the same
// options, serial-query-rate 1000); the primary BIND sends NOTIFY at once
// (notify-delay 0). Reported: p50 and p99 of each, and cnsd's over
// BIND's (x-bind-p50, x-bind-p99).
//
//	go test ./cmd/cnsd -run '^$' -bench Propagation -benchtime 100x
func BenchmarkPropagation(b *testing.B) {
	const zone = "bench.example.test"
	// cnsd and its secondary: the secondary is started first, from the
	// address cnsd will listen on, so that cnsd names it as a peer.
	dnsAddr := fmt.Sprintf("127.0.0.1:%d", freePorts(b, 1)[0])
	viaCNSD := secondarytest.StartBIND(b, secondarytest.Config{Primary: netip.MustParseAddrPort(dnsAddr), Zones: []string{zone}})
	f := propagationCloud()
	c := startOverMockWith(b, mockcloud.New(f, nil), fmt.Sprintf(`%q: {"networks": ["*"], "peers": [%q]}`, zone, viaCNSD.Addr().String()),
		func(c *overCloud) { c.dns = dnsAddr })
	vm := publishedVM(b, c, f, zone)
	owner := ""
	for _, v := range f.VMs {
		if v.UUID == vm {
			owner = v.OwnerUUID
		}
	}

	// BIND as the primary, and its secondary.
	var notify []netip.AddrPort
	primary := secondarytest.StartBINDPrimary(b, zone, benchZoneFile(zone), func() []netip.AddrPort { return notify })
	viaBIND := secondarytest.StartBIND(b, secondarytest.Config{Primary: primary.Addr(), Zones: []string{zone}})
	notify = []netip.AddrPort{viaBIND.Addr()}
	primary.Restart(b)
	awaitAnswer(b, viaBIND.Addr().String(), "ns1."+zone+".", time.Minute)
	if !answersWithin(viaCNSD.Addr().String(), vm+".inst."+owner+"."+zone+".", time.Minute) {
		b.Fatalf("the secondary of cnsd did not load %s\n%s", zone, viaCNSD.Log())
	}

	var cnsdLat, bindLat []time.Duration
	i := 0
	for b.Loop() {
		i++
		time.Sleep(propagationGap)
		name := fmt.Sprintf("prop%d", i)
		start := time.Now()
		if _, err := c.cloud.SetTags(vm, map[string]any{"triton.cns.services": name}); err != nil {
			b.Fatal(err)
		}
		awaitAnswer(b, viaCNSD.Addr().String(), name+".svc."+owner+"."+zone+".", 10*time.Second)
		cnsdLat = append(cnsdLat, time.Since(start))

		time.Sleep(propagationGap)
		start = time.Now()
		dnsUpdate(b, primary.Addr().String(), zone, name)
		awaitAnswer(b, viaBIND.Addr().String(), name+"."+zone+".", 10*time.Second)
		bindLat = append(bindLat, time.Since(start))
	}
	reportRatio(b, "cnsd", cnsdLat, "bind", bindLat)
}

// propagationCloud is the simulated cloud of the propagation benchmarks:
// 1,000 VMs in 100 accounts (300 VMs with -short). 1,000 VMs keep every
// service under 100 members: BIND refuses a zone with a larger RRset
// unless max-records-per-type says otherwise (operator guide,
// "Secondaries").
func propagationCloud() *mockcloud.Fixture {
	vms := 1_000
	if testing.Short() {
		vms = 300
	}
	return mockcloud.Generate(mockcloud.GenOptions{VMs: vms, Accounts: 100, Servers: 20, Seed: 7, Now: time.Now().UTC()})
}

// reportRatio reports the p50 and p99 of the latencies num and den
// (NAME-p50-ms, NAME-p99-ms) and num's over den's (x-DEN-p50,
// x-DEN-p99). It sorts both.
func reportRatio(b *testing.B, numName string, num []time.Duration, denName string, den []time.Duration) {
	slices.Sort(num)
	slices.Sort(den)
	pct := func(lat []time.Duration, p int) time.Duration { return lat[(len(lat)*p+99)/100-1] }
	ms := func(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
	for _, s := range []struct {
		name string
		lat  []time.Duration
	}{{numName, num}, {denName, den}} {
		b.ReportMetric(ms(pct(s.lat, 50)), s.name+"-p50-ms")
		b.ReportMetric(ms(pct(s.lat, 99)), s.name+"-p99-ms")
	}
	b.ReportMetric(float64(pct(num, 50))/float64(pct(den, 50)), "x-"+denName+"-p50")
	b.ReportMetric(float64(pct(num, 99))/float64(pct(den, 99)), "x-"+denName+"-p99")
}

// benchZoneFile is the primary BIND's zone at its start.
func benchZoneFile(zone string) string {
	return fmt.Sprintf(`$TTL 30
@ IN SOA ns1.%[1]s. hostmaster.%[1]s. 1 3600 600 86400 30
@ IN NS ns1.%[1]s.
ns1 IN A 192.0.2.53
`, zone)
}

// dnsUpdate adds name.zone A 192.0.2.1 on the primary at addr by DNS UPDATE.
func dnsUpdate(b *testing.B, addr, zone, name string) {
	b.Helper()
	m := new(dns.Msg).SetUpdate(zone + ".")
	rr, err := dns.NewRR(fmt.Sprintf("%s.%s. 30 IN A 192.0.2.1", name, zone))
	if err != nil {
		b.Fatal(err)
	}
	m.Insert([]dns.RR{rr})
	r, _, err := (&dns.Client{Timeout: 2 * time.Second}).Exchange(m, addr)
	if err != nil || r.Rcode != dns.RcodeSuccess {
		b.Fatalf("UPDATE of %s on %s: %v %v", name, addr, r, err)
	}
}

// awaitAnswer asks addr for name's A record every millisecond until it
// answers with one, failing b after timeout.
func awaitAnswer(b *testing.B, addr, name string, timeout time.Duration) {
	b.Helper()
	if !answersWithin(addr, name, timeout) {
		b.Fatalf("%s did not answer %s within %v", addr, name, timeout)
	}
}

// answersWithin reports whether addr answers name's A record within timeout,
// asking every millisecond.
func answersWithin(addr, name string, timeout time.Duration) bool {
	deadline := time.Now().Add(timeout)
	for time.Now().Before(deadline) {
		if r := ask(addr, name, dns.TypeA); r != nil && r.Rcode == dns.RcodeSuccess && len(r.Answer) > 0 {
			return true
		}
		time.Sleep(time.Millisecond)
	}
	return false
}
