package main

import (
	"fmt"
	"net"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/miekg/dns"

	"github.com/cnsd/cnsd/mockcloud"
)

// BenchmarkChangeToNotify measures docs/pipeline.md's end-to-end target: a
// change made in the cloud is on the wire as a NOTIFY within 50 ms at the
// 99th percentile. cnsd runs whole over a simulated cloud of 10,000 VMs
// (500 with -short) with the default coalescing window; each iteration
// sets a VM's services tag through the cloud's admin API and waits for
// the NOTIFY of the new serial at a secondary on loopback. The time runs
// from the change in the cloud, so it includes the changefeed item and
// cnsd's GET of the VM: an upper bound of "seen on the feed".
//
//	go test ./cmd/cnsd -run '^$' -bench ChangeToNotify -benchtime 300x -count 3
func BenchmarkChangeToNotify(b *testing.B) {
	const zone = "bench.example.test"
	vms := 10_000
	if testing.Short() {
		vms = 500
	}
	f := mockcloud.Generate(mockcloud.GenOptions{VMs: vms, Accounts: 100, Servers: 20, Seed: 7, Now: time.Now().UTC()})
	sec := startNotifyCatcher(b, zone+".")
	c := startOverFixture(b, f, fmt.Sprintf(`%q: {"networks": ["*"], "peers": [%q]}`, zone, sec.addr))
	vm := publishedVM(b, c, f, zone)
	sec.quiet(b, 500*time.Millisecond)

	var lat []time.Duration
	i := 0
	for b.Loop() {
		i++
		last := sec.serial()
		start := time.Now()
		if _, err := c.cloud.SetTags(vm, map[string]any{"triton.cns.services": fmt.Sprintf("bench%d", i)}); err != nil {
			b.Fatal(err)
		}
		lat = append(lat, sec.next(b, last).Sub(start))
	}
	slices.Sort(lat)
	ms := func(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
	b.ReportMetric(ms(lat[len(lat)/2]), "p50-ms")
	b.ReportMetric(ms(lat[(len(lat)*99+99)/100-1]), "p99-ms")
	b.ReportMetric(ms(lat[len(lat)-1]), "max-ms")
}

// publishedVM returns a running VM of f whose instance name cnsd serves.
func publishedVM(b *testing.B, c *overCloud, f *mockcloud.Fixture, zone string) string {
	b.Helper()
	deadline := time.Now().Add(2 * time.Minute)
	for time.Now().Before(deadline) {
		for _, vm := range f.VMs {
			if vm.State != "running" {
				continue
			}
			r := ask(c.dns, vm.UUID+".inst."+vm.OwnerUUID+"."+zone+".", dns.TypeA)
			if r != nil && len(r.Answer) > 0 {
				return vm.UUID
			}
			if r == nil || r.Rcode != dns.RcodeSuccess && r.Rcode != dns.RcodeNameError {
				break // not serving yet: wait
			}
		}
		time.Sleep(100 * time.Millisecond)
	}
	b.Fatalf("cnsd serves no running VM of the cloud in %s\n%s", zone, c.stderr.String())
	return ""
}

// notifyCatcher is a secondary that answers NOTIFY and SOA for one zone,
// serving each NOTIFY's serial at once, and notes when each NOTIFY came.
type notifyCatcher struct {
	addr string
	zone string
	got  chan notified

	mu     sync.Mutex
	latest uint32
}

type notified struct {
	serial uint32
	at     time.Time
}

func startNotifyCatcher(b *testing.B, zone string) *notifyCatcher {
	pc, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	n := &notifyCatcher{addr: pc.LocalAddr().String(), zone: zone, got: make(chan notified, 1024)}
	srv := &dns.Server{PacketConn: pc, Handler: n}
	go srv.ActivateAndServe()
	b.Cleanup(func() { srv.Shutdown() })
	return n
}

func (n *notifyCatcher) ServeDNS(w dns.ResponseWriter, r *dns.Msg) {
	at := time.Now()
	m := new(dns.Msg)
	m.SetReply(r)
	m.Authoritative = true
	if len(r.Question) != 1 || r.Question[0].Name != n.zone {
		m.Rcode = dns.RcodeRefused
		w.WriteMsg(m)
		return
	}
	n.mu.Lock()
	if soa, ok := firstSOA(r.Answer); ok && r.Opcode == dns.OpcodeNotify {
		n.latest = soa.Serial
		select {
		case n.got <- notified{soa.Serial, at}:
		default:
		}
	}
	serial := n.latest
	n.mu.Unlock()
	if r.Opcode == dns.OpcodeQuery && r.Question[0].Qtype == dns.TypeSOA {
		m.Answer = []dns.RR{&dns.SOA{Hdr: dns.RR_Header{Name: n.zone, Rrtype: dns.TypeSOA, Class: dns.ClassINET, Ttl: 60},
			Ns: "ns1." + n.zone, Mbox: "hostmaster." + n.zone, Serial: serial}}
	}
	w.WriteMsg(m)
}

func firstSOA(rrs []dns.RR) (*dns.SOA, bool) {
	for _, rr := range rrs {
		if soa, ok := rr.(*dns.SOA); ok {
			return soa, true
		}
	}
	return nil, false
}

func (n *notifyCatcher) serial() uint32 {
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.latest
}

// next waits for the NOTIFY of a serial other than last and returns when
// it came.
func (n *notifyCatcher) next(b *testing.B, last uint32) time.Time {
	b.Helper()
	timeout := time.After(10 * time.Second)
	for {
		select {
		case got := <-n.got:
			if got.serial != last {
				return got.at
			}
		case <-timeout:
			b.Fatalf("no NOTIFY after serial %d within 10 s", last)
		}
	}
}

// quiet waits until no NOTIFY has come for d: the bootstrap's are over.
func (n *notifyCatcher) quiet(b *testing.B, d time.Duration) {
	b.Helper()
	deadline := time.Now().Add(time.Minute)
	for time.Now().Before(deadline) {
		select {
		case <-n.got:
		case <-time.After(d):
			return
		}
	}
	b.Fatal("NOTIFYs still coming after a minute")
}
