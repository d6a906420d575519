package xfr

import (
	"encoding/binary"
	"fmt"
	"net"
	"testing"
	"time"

	"github.com/miekg/dns"
)

// The tests in this file ask a running server over real UDP and TCP
// sockets on 127.0.0.1 and look at the octets it sends: sizes, flags,
// sections and the EDNS0 and TSIG records, where Knot, NSD and BIND agree
// on the answer.

// noRRL keeps rate limiting out of tests that send many queries from
// one address in a short time.
const noRRL = `, "rrl": {"disabled": true}`

// wireZone holds a name whose answer needs more than 1232 octets, SRV
// records whose targets' addresses do not all fit, and names repeated
// often enough for compression to matter.
func wireZone() map[string][]string {
	zone := bigZone()["example.test."]
	for i := range 3 {
		zone = append(zone, fmt.Sprintf("_x._tcp.svc SRV 0 10 80 t%d.example.test.", i))
		for j := range 20 {
			zone = append(zone, fmt.Sprintf("t%d AAAA 2001:db8::%x:%x", i, i, j+1))
		}
	}
	return map[string][]string{"example.test.": zone}
}

// rawExchange sends the octets b to addr over network and returns the
// answer, parsed, with its size on the wire.
func rawExchange(t *testing.T, network, addr string, b []byte) (*dns.Msg, []byte) {
	t.Helper()
	var err error
	for range 20 { // the server's goroutines may not be serving yet
		var c net.Conn
		if c, err = net.DialTimeout(network, addr, time.Second); err != nil {
			continue
		}
		co := &dns.Conn{Conn: c}
		_ = c.SetDeadline(time.Now().Add(500 * time.Millisecond))
		if _, err = co.Write(b); err == nil {
			buf := make([]byte, dns.MaxMsgSize)
			var n int
			if n, err = co.Read(buf); err == nil {
				c.Close()
				m := new(dns.Msg)
				if err := m.Unpack(buf[:n]); err != nil {
					t.Fatalf("answer does not parse: %v", err)
				}
				return m, buf[:n]
			}
		}
		c.Close()
	}
	t.Fatalf("%s exchange with %s: %v", network, addr, err)
	return nil, nil
}

func pack(t *testing.T, m *dns.Msg) []byte {
	t.Helper()
	b, err := m.Pack()
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestUDPPayloadSize: over UDP an answer is at most 1232 octets whatever
// buffer the client announces (DNS Flag Day 2020), 512 without EDNS0, or
// dns.udp_max_payload; the answer's OPT advertises that size.
func TestUDPPayloadSize(t *testing.T) {
	src := testStore(t, wireZone())
	defaultAddr, _ := serve(t, testConfig(t, noRRL), src, Options{})
	largeAddr, _ := serve(t, testConfig(t, noRRL+`, "dns": {"udp_max_payload": 4096}`), src, Options{})
	cases := []struct {
		name      string
		addr      string
		edns      uint16 // the client's buffer; 0 for no EDNS0
		network   string
		tc        bool
		maxWire   int
		advertise uint16
	}{
		{name: "no EDNS0", addr: defaultAddr, network: "udp", tc: true, maxWire: 512},
		{name: "client 4096", addr: defaultAddr, edns: 4096, network: "udp", tc: true, maxWire: 1232, advertise: 1232},
		{name: "client 1232", addr: defaultAddr, edns: 1232, network: "udp", tc: true, maxWire: 1232, advertise: 1232},
		{name: "client 1000", addr: defaultAddr, edns: 1000, network: "udp", tc: true, maxWire: 1000, advertise: 1232},
		{name: "client 4096 over TCP", addr: defaultAddr, edns: 4096, network: "tcp", maxWire: dns.MaxMsgSize, advertise: 1232},
		{name: "configured 4096", addr: largeAddr, edns: 4096, network: "udp", maxWire: 4096, advertise: 4096},
		{name: "configured 4096, client 1232", addr: largeAddr, edns: 1232, network: "udp", tc: true, maxWire: 1232, advertise: 4096},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := new(dns.Msg).SetQuestion("big.example.test.", dns.TypeA)
			if tc.edns > 0 {
				r.SetEdns0(tc.edns, false)
			}
			m, wire := rawExchange(t, tc.network, tc.addr, pack(t, r))
			if m.Truncated != tc.tc || len(wire) > tc.maxWire {
				t.Fatalf("TC %v, %d octets; want TC %v, at most %d octets", m.Truncated, len(wire), tc.tc, tc.maxWire)
			}
			if !tc.tc && len(m.Answer) != 100 {
				t.Fatalf("%d answers, want 100", len(m.Answer))
			}
			opt := m.IsEdns0()
			switch {
			case tc.advertise == 0 && opt != nil:
				t.Fatalf("OPT in the answer to a query without one: %v", opt)
			case tc.advertise != 0 && (opt == nil || opt.UDPSize() != tc.advertise):
				t.Fatalf("answer's OPT %v, want one advertising %d", opt, tc.advertise)
			}
		})
	}
}

// TestTruncation follows RFC 2181 §9: TC is set only when the answer
// itself does not fit, and then the answer section is empty (as Knot
// and NSD send it); additional records that do not fit are left out
// without TC, whole RRsets at a time.
func TestTruncation(t *testing.T) {
	addr, _ := serve(t, testConfig(t, noRRL), testStore(t, wireZone()), Options{})
	cases := []struct {
		name     string
		qname    string
		qtype    uint16
		edns     uint16
		tc       bool
		answers  int
		extraMin int // additional records (besides OPT) at least
		extraMax int // and at most
	}{
		{name: "answer too large", qname: "big.example.test.", qtype: dns.TypeA, tc: true},
		{name: "answer too large for EDNS0", qname: "big.example.test.", qtype: dns.TypeA, edns: 1232, tc: true},
		{name: "additional records dropped", qname: "_x._tcp.svc.example.test.", qtype: dns.TypeSRV, answers: 3, extraMax: 0},
		{name: "some additional RRsets fit", qname: "_x._tcp.svc.example.test.", qtype: dns.TypeSRV, edns: 1232,
			answers: 3, extraMin: 20, extraMax: 40},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := new(dns.Msg).SetQuestion(tc.qname, tc.qtype)
			if tc.edns > 0 {
				r.SetEdns0(tc.edns, false)
			}
			m, _ := rawExchange(t, "udp", addr, pack(t, r))
			extra := withoutOPT(m.Extra)
			if m.Truncated != tc.tc || len(m.Answer) != tc.answers || len(m.Ns) != 0 ||
				len(extra) < tc.extraMin || len(extra) > tc.extraMax {
				t.Fatalf("TC %v, %d answers, %d authority, %d additional; want TC %v, %d answers, none, %d to %d",
					m.Truncated, len(m.Answer), len(m.Ns), len(extra), tc.tc, tc.answers, tc.extraMin, tc.extraMax)
			}
			if len(extra)%20 != 0 {
				t.Fatalf("%d additional records: a partial RRset of 20", len(extra))
			}
			if len(m.Question) != 1 || m.Question[0] != r.Question[0] {
				t.Fatalf("question %v, want %v", m.Question, r.Question)
			}
		})
	}
}

// TestCompression: answers and transfer messages use name compression;
// each is smaller than the same message packed without it and parses
// back to the same records.
func TestCompression(t *testing.T) {
	addr, _ := serve(t, testConfig(t, noRRL+loopbackTransfers), testStore(t, wireZone()), Options{})
	check := func(t *testing.T, m *dns.Msg, wire []byte) {
		t.Helper()
		plain := m.Copy()
		plain.Compress = false
		uncompressed := pack(t, plain)
		if len(wire) >= len(uncompressed) {
			t.Fatalf("%d octets sent, %d without compression", len(wire), len(uncompressed))
		}
		again := new(dns.Msg)
		if err := again.Unpack(uncompressed); err != nil || again.String() != m.String() {
			t.Fatalf("the message does not parse back the same (%v):\n%v\n%v", err, again, m)
		}
	}
	for _, network := range []string{"udp", "tcp"} {
		t.Run("answer over "+network, func(t *testing.T) {
			r := new(dns.Msg).SetQuestion("_x._tcp.svc.example.test.", dns.TypeSRV)
			r.SetEdns0(1232, false)
			m, wire := rawExchange(t, network, addr, pack(t, r))
			if len(m.Answer) != 3 || len(m.Extra) < 21 {
				t.Fatalf("%d answers, %d additional; want 3 and more than 20", len(m.Answer), len(m.Extra))
			}
			check(t, m, wire)
		})
	}
	for _, ixfr := range []bool{false, true} {
		t.Run(fmt.Sprintf("transfer, IXFR %v", ixfr), func(t *testing.T) {
			r := new(dns.Msg)
			if ixfr {
				r.SetIxfr("example.test.", 1, "ns.example.test.", "hostmaster.example.test.")
			} else {
				r.SetAxfr("example.test.")
			}
			c, err := net.Dial("tcp", addr)
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			_ = c.SetDeadline(time.Now().Add(5 * time.Second))
			co := &dns.Conn{Conn: c}
			if _, err := co.Write(pack(t, r)); err != nil {
				t.Fatal(err)
			}
			for soas := 0; soas < 2; {
				buf := make([]byte, dns.MaxMsgSize)
				n, err := co.Read(buf)
				if err != nil {
					t.Fatal(err)
				}
				m := new(dns.Msg)
				if err := m.Unpack(buf[:n]); err != nil || len(m.Answer) == 0 {
					t.Fatalf("transfer message (%d records): %v", len(m.Answer), err)
				}
				check(t, m, buf[:n])
				for _, rr := range m.Answer {
					if rr.Header().Rrtype == dns.TypeSOA {
						soas++
					}
				}
			}
		})
	}
}

// TestEDNSAnswer: the answer's OPT is version 0, advertises cnsd's size
// and carries the query's DO bit (RFC 3225 §3); a query of a later EDNS
// version gets BADVERS with such an OPT (RFC 6891 §6.1.3).
func TestEDNSAnswer(t *testing.T) {
	addr, _ := serve(t, testConfig(t, noRRL), testStore(t, queryZones), Options{})
	cases := []struct {
		name    string
		qname   string
		do      bool
		version uint8
		rcode   int
	}{
		{name: "answer, DO", qname: "web.example.test.", do: true},
		{name: "answer, no DO", qname: "web.example.test."},
		{name: "NXDOMAIN, DO", qname: "nothing.example.test.", do: true, rcode: dns.RcodeNameError},
		{name: "REFUSED, DO", qname: "www.other.test.", do: true, rcode: dns.RcodeRefused},
		{name: "version 1, DO", qname: "web.example.test.", do: true, version: 1, rcode: dns.RcodeBadVers},
		{name: "version 1", qname: "web.example.test.", version: 1, rcode: dns.RcodeBadVers},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := new(dns.Msg).SetQuestion(tc.qname, dns.TypeA)
			r.SetEdns0(4096, tc.do)
			r.IsEdns0().SetVersion(tc.version)
			m, _ := rawExchange(t, "udp", addr, pack(t, r))
			opt := m.IsEdns0()
			if m.Rcode != tc.rcode || opt == nil {
				t.Fatalf("rcode %s, OPT %v; want %s with an OPT", dns.RcodeToString[m.Rcode], opt, dns.RcodeToString[tc.rcode])
			}
			if opt.Do() != tc.do || opt.Version() != 0 || opt.UDPSize() != 1232 || opt.Hdr.Name != "." {
				t.Fatalf("OPT %v; want version 0, udp 1232, DO %v", opt, tc.do)
			}
		})
	}
}

// TestMalformedEDNS: a query with two OPT records, an OPT outside the
// additional section or with an owner other than the root, a header that
// counts records the message does not hold, or octets after its last
// record is answered FORMERR (RFC 6891 §6.1.1), like Knot: the question
// copied when it is whole, no OPT.
func TestMalformedEDNS(t *testing.T) {
	addr, _ := serve(t, testConfig(t, noRRL), testStore(t, queryZones), Options{})
	query := func() *dns.Msg {
		r := new(dns.Msg).SetQuestion("web.example.test.", dns.TypeA)
		r.SetEdns0(1232, true)
		return r
	}
	withCount := func(b []byte, at int, n uint16) []byte {
		binary.BigEndian.PutUint16(b[at:], n)
		return b
	}
	cases := []struct {
		name       string
		wire       func() []byte
		rcode      int
		noQuestion bool // the question cannot be echoed
	}{
		{name: "one OPT", rcode: dns.RcodeSuccess, wire: func() []byte { return pack(t, query()) }},
		{name: "two OPT", rcode: dns.RcodeFormatError, wire: func() []byte {
			r := query()
			r.Extra = append(r.Extra, r.Extra[0])
			return pack(t, r)
		}},
		{name: "OPT in the answer section", rcode: dns.RcodeFormatError, wire: func() []byte {
			r := query()
			r.Answer, r.Extra = r.Extra, nil
			return pack(t, r)
		}},
		{name: "OPT in the authority section", rcode: dns.RcodeFormatError, wire: func() []byte {
			r := query()
			r.Ns, r.Extra = r.Extra, nil
			return pack(t, r)
		}},
		{name: "OPT owner not the root", rcode: dns.RcodeFormatError, wire: func() []byte {
			r := query()
			r.Extra[0].Header().Name = "web.example.test."
			return pack(t, r)
		}},
		{name: "ARCOUNT 1, no record", rcode: dns.RcodeFormatError, wire: func() []byte {
			return withCount(pack(t, new(dns.Msg).SetQuestion("web.example.test.", dns.TypeA)), 10, 1)
		}},
		{name: "ARCOUNT 2, one OPT", rcode: dns.RcodeFormatError, wire: func() []byte {
			return withCount(pack(t, query()), 10, 2)
		}},
		{name: "NSCOUNT 1, no record", rcode: dns.RcodeFormatError, wire: func() []byte {
			return withCount(pack(t, query()), 8, 1)
		}},
		{name: "octets after the last record", rcode: dns.RcodeFormatError, wire: func() []byte {
			return append(pack(t, query()), 0, 0, 0)
		}},
		{name: "question without class", rcode: dns.RcodeFormatError, noQuestion: true, wire: func() []byte {
			b := pack(t, new(dns.Msg).SetQuestion("web.example.test.", dns.TypeA))
			return b[:len(b)-2]
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			b := tc.wire()
			id := binary.BigEndian.Uint16(b)
			m, _ := rawExchange(t, "udp", addr, b)
			if m.Rcode != tc.rcode || m.Id != id || !m.Response {
				t.Fatalf("rcode %s, id %d; want %s, id %d", dns.RcodeToString[m.Rcode], m.Id, dns.RcodeToString[tc.rcode], id)
			}
			if tc.noQuestion {
				if len(m.Question) != 0 {
					t.Fatalf("question %v echoed from a question cut short", m.Question)
				}
			} else if len(m.Question) != 1 || m.Question[0].Name != "web.example.test." || m.Question[0].Qtype != dns.TypeA {
				t.Fatalf("question %v, want the query's", m.Question)
			}
			if tc.rcode == dns.RcodeFormatError && (len(m.Answer)+len(m.Ns)+len(m.Extra) != 0 || m.Authoritative) {
				t.Fatalf("FORMERR with records or AA: %v", m)
			}
		})
	}
}
