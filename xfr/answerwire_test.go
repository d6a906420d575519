package xfr

import (
	"bytes"
	"net"
	"slices"
	"testing"

	"github.com/miekg/dns"
)

// wirePath answers pkt as a UDP worker does after a cache miss, written
// from the records; ok is false when answerWire declines it. The answer
// fills the cache as the worker's does.
func wirePath(s *Server, pkt []byte) (ans []byte, ok bool) {
	st := s.settings()
	var q quickQuery
	if !st.parseQuick(pkt, 0, &q) {
		return nil, false
	}
	var nw nameWriter
	ans, z, qname, rcode, ok := s.answerWire(st, &q, pkt, nil, &nw)
	if ok {
		st.rememberWire(&q, ans, z, qname, rcode)
	}
	return ans, ok
}

// tcpCacheWriter is cacheWriter on TCP: the size limit is TCP's.
type tcpCacheWriter struct{ cacheWriter }

func (w *tcpCacheWriter) RemoteAddr() net.Addr {
	return &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 5300}
}

// TestAnswerWireTCP: over TCP (no size limit from the client) the
// answers written from the records are the full path's too.
func TestAnswerWireTCP(t *testing.T) {
	s := New(testConfig(t, noRRL), testStore(t, queryZones), Options{}, nil)
	for _, edns := range []int{0, 512} {
		pkt := packQuery(t, 7, "web.example.test.", dns.TypeA, edns, false, false, false)
		st := s.settings()
		var q quickQuery
		var nw nameWriter
		if !st.parseQuick(pkt, dns.MaxMsgSize, &q) {
			t.Fatal("parseQuick declined")
		}
		got, _, _, _, ok := s.answerWire(st, &q, pkt, nil, &nw)
		r, _ := request(pkt)
		w := &tcpCacheWriter{}
		s.ServeDNS(w, r)
		if !ok || !bytes.Equal(got, w.sent) {
			t.Errorf("EDNS0 %d: written %v %x\nfull path %x", edns, ok, got, w.sent)
		}
	}
}

// TestAnswerWire: the answers written from the records are the full
// path's, byte for byte, and fill the cache with them; the shapes it
// leaves to the full path are declined.
func TestAnswerWire(t *testing.T) {
	for _, c := range []struct {
		name   string
		qname  string
		qtype  uint16
		edns   int
		do, rd bool
		cd     bool
		wire   bool // answered from the records
	}{
		{"A, two records", "web.example.test.", dns.TypeA, 0, false, false, false, true},
		{"A with EDNS0", "web.example.test.", dns.TypeA, 1232, false, true, false, true},
		{"AAAA with DO and CD", "web.example.test.", dns.TypeAAAA, 4096, true, false, true, true},
		{"TXT", "web.example.test.", dns.TypeTXT, 512, false, false, false, true},
		{"deep name", "a.b.c.example.test.", dns.TypeA, 1232, false, false, false, true},
		{"sub-zone", "x.sub.example.test.", dns.TypeA, 0, false, false, false, true},
		{"mixed case", "Web.Example.test.", dns.TypeA, 0, false, false, false, false},
		{"CNAME", "alias.example.test.", dns.TypeA, 0, false, false, false, false},
		{"NODATA", "a.b.c.example.test.", dns.TypeAAAA, 0, false, false, false, true},
		{"NODATA, AAAA", "_http._tcp.svc.example.test.", dns.TypeAAAA, 1232, false, true, false, true},
		// Left to the full path before the lookup.
		{"NODATA, a type with names", "web.example.test.", dns.TypeMX, 1232, false, true, false, false},
		{"NODATA, SRV", "web.example.test.", dns.TypeSRV, 0, false, false, false, true},
		{"NXDOMAIN", "nope.example.test.", dns.TypeA, 0, false, false, false, true},
		{"NXDOMAIN with DO and CD", "x.nope.example.test.", dns.TypeTXT, 4096, true, true, true, true},
		{"NXDOMAIN in a sub-zone", "nope.sub.example.test.", dns.TypeA, 1232, false, false, false, true},
		{"NXDOMAIN below a record", "x.web.example.test.", dns.TypeAAAA, 0, false, false, false, true},
		// Its SOA's RNAME shares more with the MNAME than with the
		// question: miekg/dns points it into the MNAME.
		{"NXDOMAIN, reverse", "9.2.0.192.in-addr.arpa.", dns.TypePTR, 0, false, false, false, false},
		{"empty non-terminal", "b.c.example.test.", dns.TypeA, 0, false, false, false, true},
		{"mixed case NXDOMAIN", "Nope.example.test.", dns.TypeA, 0, false, false, false, false},
		{"apex", "example.test.", dns.TypeA, 0, false, false, false, false},
		{"SRV", "_http._tcp.svc.example.test.", dns.TypeSRV, 0, false, false, false, true},
		{"SRV with EDNS0", "_http._tcp.svc.example.test.", dns.TypeSRV, 1232, true, false, false, true},
		{"PTR", "1.2.0.192.in-addr.arpa.", dns.TypePTR, 0, false, false, false, false},
		{"no zone", "web.elsewhere.test.", dns.TypeA, 0, false, false, false, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			s := New(testConfig(t, noRRL), testStore(t, queryZones), Options{}, nil)
			pkt := packQuery(t, 7, c.qname, c.qtype, c.edns, c.do, c.rd, c.cd)
			got, ok := wirePath(s, pkt)
			if ok != c.wire {
				t.Fatalf("answered from the records: %v, want %v", ok, c.wire)
			}
			if !ok {
				return
			}
			want := fullPath(s, pkt, false)
			if !bytes.Equal(got, want) {
				t.Fatalf("written %x\nfull path %x", got, want)
			}
			pkt[0] = 9 // another ID, answered from the cache now
			hit, ok := fastPath(s, pkt)
			if want := fullPath(s, pkt, false); !ok || !bytes.Equal(hit, want) {
				t.Errorf("cache after it: %v %x, want %x", ok, hit, want)
			}
		})
	}
}

// srvZones holds SRV records whose targets' addresses miekg/dns
// compresses in every way answerWire must follow: targets that are the
// question's suffix, another target's suffix, one another's; a target
// twice, one outside the zone, one without addresses, one in capitals
// and one with an escape (declined, as miekg/dns's compression map
// compares names as spelled).
var srvZones = map[string][]string{
	"example.test.": {
		`web A 192.0.2.1`, `web A 192.0.2.2`, `web AAAA 2001:db8::1`, `web TXT "hello world"`,
		`a.web A 192.0.2.5`, `b.a.web AAAA 2001:db8::5`,
		`svc A 192.0.2.7`, `_tcp.svc A 192.0.2.8`,
		`_http._tcp.svc SRV 0 10 80 web.example.test.`, `_http._tcp.svc SRV 0 10 8080 ext.other.test.`,
		`_http._tcp.svc SRV 1 10 80 a.web.example.test.`, `_http._tcp.svc SRV 2 10 80 web.example.test.`,
		`_http._tcp.svc SRV 3 10 80 svc.example.test.`, `_http._tcp.svc SRV 4 10 80 nothing.example.test.`,
		`_ldap._tcp.svc SRV 0 0 389 b.a.web.example.test.`, `_ldap._tcp.svc SRV 0 0 389 a.web.example.test.`,
		`_ldap._tcp.svc SRV 0 0 389 _tcp.svc.example.test.`, `_ldap._tcp.svc SRV 0 0 389 web.example.test.`,
		`_caps._tcp SRV 0 0 1 Web.example.test.`,
		`_esc._tcp SRV 0 0 1 w\.eb.example.test.`,
		`_one._tcp SRV 0 0 1 a.web.example.test.`,
		`_out._tcp SRV 0 0 1 ext.other.test.`,
	},
}

// TestAnswerWireSRV: SRV answers written from the records, with their
// targets' addresses, are the full path's byte for byte.
func TestAnswerWireSRV(t *testing.T) {
	for _, c := range []struct {
		qname string
		wire  bool
	}{
		{"_http._tcp.svc.example.test.", true},
		{"_ldap._tcp.svc.example.test.", true},
		{"_one._tcp.example.test.", true},
		{"_out._tcp.example.test.", true},
		{"_caps._tcp.example.test.", false},
		{"_esc._tcp.example.test.", false},
	} {
		for _, edns := range []int{0, 1232} {
			s := New(testConfig(t, noRRL), testStore(t, srvZones), Options{}, nil)
			pkt := packQuery(t, 7, c.qname, dns.TypeSRV, edns, false, false, false)
			got, ok := wirePath(s, pkt)
			if ok != c.wire {
				t.Fatalf("%s, EDNS0 %d: answered from the records: %v, want %v", c.qname, edns, ok, c.wire)
			}
			if !ok {
				continue
			}
			want := fullPath(s, pkt, false)
			if !bytes.Equal(got, want) {
				t.Fatalf("%s, EDNS0 %d:\nwritten   %x\nfull path %x", c.qname, edns, got, want)
			}
			var m dns.Msg
			if err := m.Unpack(got); err != nil || len(m.Answer) == 0 || len(m.Extra) == 0 && c.qname != "_out._tcp.example.test." {
				t.Fatalf("%s: %v, answer %v, extra %v", c.qname, err, m.Answer, m.Extra)
			}
		}
	}
}

// FuzzAnswerWire: whatever arrives, answerWire either declines it or
// writes exactly the octets the full path sends.
func FuzzAnswerWire(f *testing.F) {
	addQuerySeeds(f,
		querySeed{"web.example.test.", dns.TypeA, 0, false},
		querySeed{"web.example.test.", dns.TypeAAAA, 1232, true},
		querySeed{"web.example.test.", dns.TypeTXT, 4096, false},
		querySeed{"a.b.c.example.test.", dns.TypeA, 512, false},
		querySeed{"x.sub.example.test.", dns.TypeA, 100, false},
		querySeed{"nope.example.test.", dns.TypeA, 1232, true},
		querySeed{"b.c.example.test.", dns.TypeTXT, 0, false},
		querySeed{"nope.sub.example.test.", dns.TypeAAAA, 512, false},
		querySeed{"9.2.0.192.in-addr.arpa.", dns.TypePTR, 0, false},
		querySeed{"_http._tcp.svc.example.test.", dns.TypeSRV, 1232, false},
		querySeed{"_ldap._tcp.svc.example.test.", dns.TypeSRV, 0, true},
		querySeed{"_one._tcp.example.test.", dns.TypeSRV, 100, false},
		querySeed{"web.example.test.", dns.TypeSRV, 512, false})
	zones := map[string][]string{}
	for z, recs := range queryZones {
		zones[z] = append(zones[z], recs...)
	}
	for _, r := range srvZones["example.test."] {
		if !slices.Contains(zones["example.test."], r) {
			zones["example.test."] = append(zones["example.test."], r)
		}
	}
	s := New(testConfig(f, noRRL), testStore(f, zones), Options{}, nil)
	f.Fuzz(func(t *testing.T, packet []byte) {
		got, ok := wirePath(s, packet)
		if !ok {
			return
		}
		want := fullPath(s, packet, false)
		if !bytes.Equal(got, want) {
			t.Fatalf("request %x:\nwritten   %x\nfull path %x", packet, got, want)
		}
		// What it cached is the full path's answer too.
		if hit, ok := fastPath(s, packet); !ok || !bytes.Equal(hit, want) {
			t.Fatalf("request %x:\ncache     %v %x\nfull path %x", packet, ok, hit, want)
		}
	})
}
