package main

import (
	"fmt"
	"maps"
	"net/netip"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/miekg/dns"

	"github.com/cnsd/cnsd/mockcloud"
	"github.com/cnsd/cnsd/xfr/secondarytest"
)

// zonesIdle is the pause before each burst of
// BenchmarkPropagationAcrossZones: longer than one tick of BIND's stock
// serial-query-rate limiter (10 SOA queries every 500 ms), so that every
// burst finds both secondaries idle.
const zonesIdle = 600 * time.Millisecond

// BenchmarkPropagationAcrossZones measures what BIND's serial-query-rate
// does to changes that come back to back across many zones. Each burst
// sets the triton.cns.reverse_ptr tag of 40 VMs (20 with -short), one per
// account, as fast as the simulated cloud takes them: each changes the
// PTR records of the VM's addresses, so its account's fabric reverse zone
// and the shared external ones get a new serial at nearly the same time.
// The time runs from the first change until a BIND secondary answers
// every changed PTR with its new target. Two BIND secondaries of the same
// cnsd carry the same zones and get the same NOTIFYs: one with BIND's
// stock serial-query-rate (20), one with 1000 (secondarytest's). Reported:
// p50 and p99 of each (stock-…, tuned-…), stock's over tuned's
// (x-tuned-p50, x-tuned-p99) and the number of zones changed per burst.
//
//	go test ./cmd/cnsd -run '^$' -bench PropagationAcrossZones -benchtime 20x
func BenchmarkPropagationAcrossZones(b *testing.B) {
	const zone = "bench.example.test"
	vms := 40
	if testing.Short() {
		vms = 20
	}
	f := propagationCloud()
	// The secondaries become peers, whose queries rate limiting leaves
	// alone, only when cnsd reads its configuration again (below); until
	// then their first SOA queries, one per zone from each at once, would
	// be limited as a flood and some answered a few seconds late.
	const exempt = `, "rrl": {"exempt": ["127.0.0.1"]}`
	c := startOverMockWith(b, mockcloud.New(f, nil), fmt.Sprintf(`%q: {"networks": ["*"]}`, zone),
		func(c *overCloud) { c.extra = exempt })
	publishedVM(b, c, f, zone)
	ptrs := reversePTRs(b, c, f, vms)
	var zones []string
	for _, names := range ptrs {
		for _, name := range names {
			if z := parentZone(name); !slices.Contains(zones, z) {
				zones = append(zones, z)
			}
		}
	}

	// The secondaries can only be started once the zones are known, so
	// cnsd learns them as peers from its configuration file, read again.
	primary := netip.MustParseAddrPort(c.dns)
	stock := secondarytest.StartBIND(b, secondarytest.Config{Primary: primary, Zones: zones,
		SerialQueryRate: secondarytest.StockSerialQueryRate})
	tuned := secondarytest.StartBIND(b, secondarytest.Config{Primary: primary, Zones: zones})
	peers := fmt.Sprintf("[%q, %q]", stock.Addr(), tuned.Addr())
	c.extra = exempt + fmt.Sprintf(`, "reverse_zones": {"peers": %s}`, peers)
	c.writeConfig(fmt.Sprintf(`%q: {"networks": ["*"], "peers": %s}`, zone, peers))
	deadline := time.Now().Add(10 * time.Second)
	for !strings.Contains(c.stderr.String(), "configuration reloaded") {
		if time.Now().After(deadline) {
			b.Fatalf("cnsd did not reload its configuration\n%s", c.stderr.String())
		}
		time.Sleep(50 * time.Millisecond)
	}

	// An untimed burst first: both secondaries have loaded every zone
	// and follow cnsd's NOTIFYs.
	burst := 0
	reverseBurst(b, c.cloud, ptrs, burst, stock, tuned, time.Minute)
	var stockLat, tunedLat []time.Duration
	for b.Loop() {
		burst++
		time.Sleep(zonesIdle)
		s, t := reverseBurst(b, c.cloud, ptrs, burst, stock, tuned, 30*time.Second)
		stockLat = append(stockLat, s)
		tunedLat = append(tunedLat, t)
	}
	reportRatio(b, "stock", stockLat, "tuned", tunedLat)
	b.ReportMetric(float64(len(zones)), "zones")
}

// reverseBurst sets the reverse_ptr tag of every VM of ptrs, one after
// the other, to a name of burst n, and returns how long each secondary
// took from the first change to answer every PTR name of ptrs with it.
func reverseBurst(b *testing.B, cloud *mockcloud.Cloud, ptrs map[string][]string, n int, stock, tuned *secondarytest.Secondary, timeout time.Duration) (time.Duration, time.Duration) {
	b.Helper()
	want := map[string]string{}
	start := time.Now()
	for _, uuid := range slices.Sorted(maps.Keys(ptrs)) {
		vm, _ := cloud.VM(uuid)
		tags := maps.Clone(vm.Tags)
		if tags == nil {
			tags = map[string]any{}
		}
		target := fmt.Sprintf("b%d-%s.ptr.example.net", n, uuid[:8])
		tags["triton.cns.reverse_ptr"] = target
		if _, err := cloud.SetTags(uuid, tags); err != nil {
			b.Fatal(err)
		}
		for _, name := range ptrs[uuid] {
			want[name] = target + "."
		}
	}
	// Both are watched at once: they are told at the same time, and
	// watching one after the other would time the second late.
	took := make(chan time.Duration, 1)
	go func() { took <- awaitPTRs(stock.Addr().String(), want, start, timeout) }()
	t := awaitPTRs(tuned.Addr().String(), want, start, timeout)
	s := <-took
	if s < 0 || t < 0 {
		b.Fatalf("burst %d: not every PTR answered within %v (stock %v, tuned %v)\nstock:\n%s\ntuned:\n%s",
			n, timeout, s, t, stock.Log(), tuned.Log())
	}
	return s, t
}

// awaitPTRs asks addr for the PTR names of want until it answers each
// with the target want gives, and returns the time since start; -1 when
// timeout passes first. It asks for one name at a time, about every
// millisecond, and moves on when that one is answered: an answered name
// stays answered, so the last is seen within about a millisecond of the
// moment every name is. That is under a thousand queries a second;
// asking for every pending name each round was several thousand, which
// the secondary (logging every query) spent its one thread on.
func awaitPTRs(addr string, want map[string]string, start time.Time, timeout time.Duration) time.Duration {
	pending := slices.Sorted(maps.Keys(want))
	for time.Since(start) < timeout {
		for len(pending) > 0 && answersPTR(addr, pending[0], want[pending[0]]) {
			pending = pending[1:]
		}
		if len(pending) == 0 {
			return time.Since(start)
		}
		time.Sleep(time.Millisecond)
	}
	return -1
}

// answersPTR reports whether addr answers name's PTR with target alone.
func answersPTR(addr, name, target string) bool {
	r := ask(addr, name, dns.TypePTR)
	if r == nil || len(r.Answer) != 1 {
		return false
	}
	ptr, ok := r.Answer[0].(*dns.PTR)
	return ok && strings.EqualFold(ptr.Ptr, target)
}

// reversePTRs picks up to n running VMs of f in different accounts whose
// addresses cnsd serves PTR records for, and returns each one's PTR
// names. A VM is taken only when one of its reverse zones is new, so
// that every VM adds a zone.
func reversePTRs(b *testing.B, c *overCloud, f *mockcloud.Fixture, n int) map[string][]string {
	b.Helper()
	ptrs := map[string][]string{}
	owners, zones := map[string]bool{}, map[string]bool{}
	for _, vm := range f.VMs {
		if len(ptrs) == n {
			break
		}
		if vm.State != "running" || owners[vm.OwnerUUID] {
			continue
		}
		var names []string
		fresh := false
		for _, nic := range vm.NICs {
			for _, ip := range append([]string{nic.IP}, nic.IPs...) {
				name := ptrName(ip)
				if name == "" || slices.Contains(names, name) {
					continue
				}
				if r := ask(c.dns, name, dns.TypePTR); r != nil && len(r.Answer) > 0 {
					names = append(names, name)
					fresh = fresh || !zones[parentZone(name)]
				}
			}
		}
		if !fresh {
			continue
		}
		owners[vm.OwnerUUID] = true
		for _, name := range names {
			zones[parentZone(name)] = true
		}
		ptrs[vm.UUID] = names
	}
	if len(ptrs) < n {
		b.Fatalf("only %d VMs of different accounts with PTR records in a reverse zone of their own; want %d", len(ptrs), n)
	}
	return ptrs
}

// ptrName is the PTR owner name of ip (an address, or one with its
// prefix length as VMAPI gives them), "" when it is none.
func ptrName(ip string) string {
	ip, _, _ = strings.Cut(ip, "/")
	a, err := netip.ParseAddr(ip)
	if err != nil {
		return ""
	}
	name, err := dns.ReverseAddr(a.String())
	if err != nil {
		return ""
	}
	return name
}

// parentZone is the reverse zone of a PTR owner name as cnsd makes them:
// the name less its host part (one label for IPv4, 16 for IPv6).
func parentZone(name string) string {
	labels := 1
	if strings.HasSuffix(name, ".ip6.arpa.") {
		labels = 16
	}
	idx := dns.Split(name)
	return name[idx[labels]:]
}
