package secondarytest

import (
	"fmt"
	"net"
	"net/netip"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/miekg/dns"
)

// testPrimary is a minimal primary for one zone, independent of cnsd, so
// the harness can be checked on its own: it answers SOA and A queries,
// AXFR, and IXFR from the versions it keeps.
type testPrimary struct {
	zone string
	addr netip.AddrPort
	// fullIXFR answers every IXFR with the whole zone (AXFR-style), as
	// a server without the client's version does.
	fullIXFR bool
	// key, when set, is required on transfers and SOA queries.
	key *Key

	// mu guards versions.
	mu       sync.Mutex
	versions []version // oldest first
}

type version struct {
	serial uint32
	rrs    []string // presentation form, without the SOA
}

func startPrimary(t *testing.T, zone string, key *Key, rrs ...string) *testPrimary {
	t.Helper()
	p := &testPrimary{zone: dns.Fqdn(zone), key: key}
	p.versions = []version{{serial: 1, rrs: slices.Sorted(slices.Values(rrs))}}
	pc, l := ListenPair(t)
	p.addr = netip.MustParseAddrPort(pc.LocalAddr().String())
	var secrets map[string]string
	if key != nil {
		secrets = map[string]string{dns.Fqdn(key.Name): key.Secret}
	}
	for _, srv := range []*dns.Server{{PacketConn: pc, Handler: p, TsigSecret: secrets}, {Listener: l, Handler: p, TsigSecret: secrets}} {
		go func() { _ = srv.ActivateAndServe() }()
		t.Cleanup(func() { _ = srv.Shutdown() })
	}
	return p
}

// update makes a new version from the current one and sends NOTIFY to
// the secondaries.
func (p *testPrimary) update(t *testing.T, remove, add []string, notify ...netip.AddrPort) uint32 {
	t.Helper()
	p.mu.Lock()
	cur := p.versions[len(p.versions)-1]
	next := version{serial: cur.serial + 1}
	for _, rr := range cur.rrs {
		if !slices.Contains(remove, rr) {
			next.rrs = append(next.rrs, rr)
		}
	}
	next.rrs = append(next.rrs, add...)
	slices.Sort(next.rrs)
	p.versions = append(p.versions, next)
	p.mu.Unlock()
	for _, a := range notify {
		m := new(dns.Msg)
		m.SetNotify(p.zone)
		if _, err := dns.Exchange(m, a.String()); err != nil {
			t.Errorf("notify %s: %v", a, err)
		}
	}
	return next.serial
}

func (p *testPrimary) soa(serial uint32) dns.RR {
	rr, _ := dns.NewRR(fmt.Sprintf("%s 60 IN SOA ns.%s host.%s %d 3600 600 86400 30", p.zone, p.zone, p.zone, serial))
	return rr
}

func rrs(lines []string) []dns.RR {
	var out []dns.RR
	for _, l := range lines {
		rr, err := dns.NewRR(l)
		if err != nil {
			panic(err)
		}
		out = append(out, rr)
	}
	return out
}

func (p *testPrimary) ServeDNS(w dns.ResponseWriter, r *dns.Msg) {
	p.mu.Lock()
	versions, full := slices.Clone(p.versions), p.fullIXFR
	p.mu.Unlock()
	cur := versions[len(versions)-1]
	q := r.Question[0]
	m := new(dns.Msg)
	m.SetReply(r)
	m.Authoritative = true
	signed := r.IsTsig() != nil && w.TsigStatus() == nil
	if signed {
		ts := r.IsTsig()
		m.SetTsig(ts.Hdr.Name, ts.Algorithm, ts.Fudge, time.Now().Unix())
	}
	guarded := q.Qtype == dns.TypeAXFR || q.Qtype == dns.TypeIXFR || q.Qtype == dns.TypeSOA
	switch {
	case !dns.IsSubDomain(p.zone, strings.ToLower(q.Name)):
		m.Rcode = dns.RcodeRefused
	case p.key != nil && guarded && !signed:
		m.Rcode = dns.RcodeNotAuth
	case q.Qtype == dns.TypeAXFR:
		p.transfer(w, r, append(append([]dns.RR{p.soa(cur.serial)}, rrs(cur.rrs)...), p.soa(cur.serial)))
		return
	case q.Qtype == dns.TypeIXFR:
		p.transfer(w, r, p.ixfr(r, versions, full))
		return
	case q.Qtype == dns.TypeSOA && strings.EqualFold(q.Name, p.zone):
		m.Answer = []dns.RR{p.soa(cur.serial)}
	default:
		for _, rr := range rrs(cur.rrs) {
			if strings.EqualFold(rr.Header().Name, q.Name) && rr.Header().Rrtype == q.Qtype {
				m.Answer = append(m.Answer, rr)
			}
		}
	}
	_ = w.WriteMsg(m)
}

// ixfr is the RFC 1995 answer to r: one SOA when the client is current,
// the diffs from its serial when that is a kept version, else the zone.
func (p *testPrimary) ixfr(r *dns.Msg, versions []version, full bool) []dns.RR {
	cur := versions[len(versions)-1]
	var from uint32
	if len(r.Ns) == 1 {
		if soa, ok := r.Ns[0].(*dns.SOA); ok {
			from = soa.Serial
		}
	}
	if from == cur.serial {
		return []dns.RR{p.soa(cur.serial)}
	}
	i := slices.IndexFunc(versions, func(v version) bool { return v.serial == from })
	if i < 0 || full {
		return append(append([]dns.RR{p.soa(cur.serial)}, rrs(cur.rrs)...), p.soa(cur.serial))
	}
	out := []dns.RR{p.soa(cur.serial)}
	for ; i+1 < len(versions); i++ {
		a, b := versions[i], versions[i+1]
		out = append(out, p.soa(a.serial))
		for _, rr := range a.rrs {
			if !slices.Contains(b.rrs, rr) {
				out = append(out, rrs([]string{rr})...)
			}
		}
		out = append(out, p.soa(b.serial))
		for _, rr := range b.rrs {
			if !slices.Contains(a.rrs, rr) {
				out = append(out, rrs([]string{rr})...)
			}
		}
	}
	return append(out, p.soa(cur.serial))
}

func (p *testPrimary) transfer(w dns.ResponseWriter, r *dns.Msg, rrs []dns.RR) {
	if _, udp := w.RemoteAddr().(*net.UDPAddr); udp {
		m := new(dns.Msg)
		m.SetReply(r)
		m.Answer = rrs[:1]
		_ = w.WriteMsg(m)
		return
	}
	ch := make(chan *dns.Envelope, 1)
	tr := new(dns.Transfer)
	go func() {
		ch <- &dns.Envelope{RR: rrs}
		close(ch)
	}()
	_ = tr.Out(w, r, ch)
	_ = w.Close()
}

// TestSmoke checks the harness against testPrimary: the initial AXFR,
// an IXFR answered with the whole zone (counted as an AXFR), a real IXFR
// after NOTIFY, with and without TSIG.
func TestSmoke(t *testing.T) {
	key := &Key{Name: "xfr-key", Algorithm: "hmac-sha256", Secret: "c2VjcmV0LXNlY3JldC1zZWNyZXQtc2VjcmV0LXNlY3JldA=="}
	for _, tc := range []struct {
		name  string
		start func(testing.TB, Config) *Secondary
		key   *Key
	}{
		{"bind", StartBIND, nil},
		{"knot", StartKnot, nil},
		{"bind/tsig", StartBIND, key},
		{"knot/tsig", StartKnot, key},
	} {
		t.Run(tc.name, func(t *testing.T) {
			const zone = "smoke.test"
			p := startPrimary(t, zone, tc.key, "www.smoke.test. 60 IN A 192.0.2.1", "smoke.test. 60 IN NS ns.smoke.test.")
			s := tc.start(t, Config{Primary: p.addr, Zones: []string{zone}, TSIG: tc.key})
			s.WaitSerial(t, zone, 1, 20*time.Second)
			if r := s.Query(t, "www.smoke.test", "A"); len(r.Answer) != 1 {
				t.Fatalf("www.smoke.test A: %v", r)
			}
			p.mu.Lock()
			p.fullIXFR = true
			p.mu.Unlock()
			serial := p.update(t, nil, []string{"old.smoke.test. 60 IN A 192.0.2.9"}, s.Addr())
			s.WaitSerial(t, zone, serial, 20*time.Second)
			p.mu.Lock()
			p.fullIXFR = false
			p.mu.Unlock()
			serial = p.update(t, []string{"www.smoke.test. 60 IN A 192.0.2.1"},
				[]string{"www.smoke.test. 60 IN A 192.0.2.2", "new.smoke.test. 60 IN A 192.0.2.3"}, s.Addr())
			s.WaitSerial(t, zone, serial, 20*time.Second)
			r := s.Query(t, "www.smoke.test", "A")
			if got := RRsets(r.Answer); !slices.Equal(got, []string{"www.smoke.test.\t0\tIN\tA\t192.0.2.2"}) {
				t.Errorf("www.smoke.test A after update: %q", got)
			}
			// A restarted secondary keeps its copy and catches up by IXFR.
			s.WaitSaved(t, zone)
			s.Stop()
			p.update(t, nil, []string{"gone.smoke.test. 60 IN A 192.0.2.4"})
			s.Restart(t)
			serial = p.update(t, nil, []string{"back.smoke.test. 60 IN A 192.0.2.5"}, s.Addr())
			s.WaitSerial(t, zone, serial, 20*time.Second)
			want := []Transfer{{"smoke.test.", "AXFR", 1}, {"smoke.test.", "AXFR", 2}, {"smoke.test.", "IXFR", 3}, {"smoke.test.", "IXFR", 5}}
			if got := s.Transfers(zone); !slices.Equal(got, want) {
				t.Errorf("transfers:\n got %v\nwant %v\nlog:\n%s", got, want, s.Log())
			}
			if n := s.Notifies(zone); n != 3 {
				t.Errorf("%d NOTIFYs logged, want 3", n)
			}
			if a, i := s.CountAXFR(zone), s.CountIXFR(zone); a != 2 || i != 2 {
				t.Errorf("CountAXFR, CountIXFR = %d, %d, want 2, 2", a, i)
			}
		})
	}
}
