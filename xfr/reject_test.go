package xfr

import (
	"cmp"
	"encoding/binary"
	"testing"

	"github.com/miekg/dns"
)

// TestErrorAnswersCarryOPT: every answer to a request with a well-formed
// OPT record carries one (RFC 6891 §6.1.1), error answers and the SOA an
// IXFR over UDP gets included, as Knot and NSD send them; a request whose
// OPT cannot be trusted gets none.
func TestErrorAnswersCarryOPT(t *testing.T) {
	addr, _ := serve(t, testConfig(t, noRRL+loopbackTransfers), testStore(t, queryZones), Options{})
	withOPT := func(m *dns.Msg) *dns.Msg {
		m.SetEdns0(4096, true)
		return m
	}
	query := func() *dns.Msg { return new(dns.Msg).SetQuestion("web.example.test.", dns.TypeA) }
	cases := []struct {
		name    string
		req     func() *dns.Msg
		rcode   int
		opt     bool
		answers int
	}{
		{name: "no question", rcode: dns.RcodeFormatError, opt: true, req: func() *dns.Msg {
			m := withOPT(query())
			m.Question = nil
			return m
		}},
		{name: "two questions", rcode: dns.RcodeFormatError, opt: true, req: func() *dns.Msg {
			m := withOPT(query())
			m.Question = append(m.Question, m.Question[0])
			return m
		}},
		{name: "IXFR over UDP", rcode: dns.RcodeSuccess, opt: true, answers: 1, req: func() *dns.Msg {
			return withOPT(new(dns.Msg).SetIxfr("example.test.", 1, "ns.example.test.", "hostmaster.example.test."))
		}},
		{name: "IXFR without the client's SOA", rcode: dns.RcodeFormatError, opt: true, req: func() *dns.Msg {
			m := withOPT(new(dns.Msg).SetIxfr("example.test.", 1, "ns.example.test.", "hostmaster.example.test."))
			m.Ns = nil
			return m
		}},
		{name: "NOTIFY", rcode: dns.RcodeRefused, opt: true, req: func() *dns.Msg {
			return withOPT(new(dns.Msg).SetNotify("example.test."))
		}},
		{name: "UPDATE", rcode: dns.RcodeNotImplemented, opt: true, req: func() *dns.Msg {
			return withOPT(new(dns.Msg).SetUpdate("example.test."))
		}},
		{name: "IQUERY", rcode: dns.RcodeNotImplemented, opt: true, req: func() *dns.Msg {
			m := withOPT(query())
			m.Opcode = dns.OpcodeIQuery
			return m
		}},
		{name: "outside every zone", rcode: dns.RcodeRefused, opt: true, req: func() *dns.Msg {
			return withOPT(new(dns.Msg).SetQuestion("www.other.test.", dns.TypeA))
		}},
		{name: "two OPT records", rcode: dns.RcodeFormatError, req: func() *dns.Msg {
			m := withOPT(query())
			m.Extra = append(m.Extra, m.Extra[0])
			return m
		}},
		{name: "no question, no OPT", rcode: dns.RcodeFormatError, req: func() *dns.Msg {
			m := query()
			m.Question = nil
			return m
		}},
	}
	for _, tc := range cases {
		for _, network := range []string{"udp", "tcp"} {
			if tc.name == "IXFR over UDP" && network == "tcp" {
				continue
			}
			t.Run(tc.name+" over "+network, func(t *testing.T) {
				r := tc.req()
				m, _ := rawExchange(t, network, addr, pack(t, r))
				opt := m.IsEdns0()
				if m.Rcode != tc.rcode || (opt != nil) != tc.opt || len(m.Answer) != tc.answers {
					t.Fatalf("rcode %s, OPT %v, %d answers; want %s, OPT %v, %d answers",
						dns.RcodeToString[m.Rcode], opt, len(m.Answer), dns.RcodeToString[tc.rcode], tc.opt, tc.answers)
				}
				if opt != nil && (!opt.Do() || opt.Version() != 0 || opt.UDPSize() != 1232) {
					t.Fatalf("OPT %v; want version 0, udp 1232, DO", opt)
				}
				if m.Opcode != r.Opcode || m.Id != r.Id || !m.Response {
					t.Fatalf("opcode %s, id %d, QR %v; want the request's %s and %d, QR",
						dns.OpcodeToString[m.Opcode], m.Id, m.Response, dns.OpcodeToString[r.Opcode], r.Id)
				}
			})
		}
	}
}

// TestFormerrHeader: the header of a FORMERR answer to a request that
// does not parse copies the request's ID, opcode and RD (RFC 1035
// §4.1.1) and sets QR; AA, TC, RA, Z, AD and CD are the responder's, and
// cnsd sets none of them, as NSD answers. An opcode cnsd does not
// implement is NOTIMP, parsed or not, with the same header.
func TestFormerrHeader(t *testing.T) {
	addr, _ := serve(t, testConfig(t, noRRL), testStore(t, queryZones), Options{})
	// Every header bit a request can carry but QR: opcode NOTIFY,
	// AA TC RD RA Z AD CD.
	const flags = 4<<11 | 1<<10 | 1<<9 | 1<<8 | 1<<7 | 1<<6 | 1<<5 | 1<<4
	question := pack(t, new(dns.Msg).SetQuestion("web.example.test.", dns.TypeSOA))[headerLen:]
	header := func(id, bits uint16, counts ...uint16) []byte {
		b := binary.BigEndian.AppendUint16(nil, id)
		b = binary.BigEndian.AppendUint16(b, bits)
		for _, c := range counts {
			b = binary.BigEndian.AppendUint16(b, c)
		}
		return b
	}
	cases := []struct {
		name   string
		wire   []byte
		rcode  int
		noRD   bool
		opcode int
		qname  string // echoed, if any
	}{
		{name: "bad label type", opcode: dns.OpcodeNotify,
			wire: append(header(0x1234, flags, 1, 0, 0, 0), 0x40, 'x', 0, 0, 1, 0, 1)},
		{name: "pointer loop", opcode: dns.OpcodeNotify,
			wire: append(header(0x1235, flags, 1, 0, 0, 0), 0xc0, headerLen, 0, 1, 0, 1)},
		{name: "A record with 2 octets of data", opcode: dns.OpcodeNotify, qname: "web.example.test.",
			wire: append(append(header(0x1236, flags, 1, 1, 0, 0), question...), 0, 0, 1, 0, 1, 0, 0, 0, 30, 0, 2, 1, 2)},
		{name: "opcode 15, RD clear", rcode: dns.RcodeNotImplemented, noRD: true, opcode: 15,
			wire: append(header(0x1237, 15<<11|1<<9|1<<5, 1, 0, 0, 0), 0x80, 0, 0, 1, 0, 1)},
		{name: "query, CD", opcode: dns.OpcodeQuery,
			wire: append(header(0x1238, 1<<8|1<<4, 1, 0, 0, 0), 0x40, 0, 0, 1, 0, 1)},
		{name: "question cut short", opcode: dns.OpcodeQuery,
			wire: append(header(0x1239, 1<<8|1<<9|1<<7, 1, 0, 0, 0), question[:len(question)-2]...)},
	}
	for _, tc := range cases {
		for _, network := range []string{"udp", "tcp"} {
			t.Run(tc.name+" over "+network, func(t *testing.T) {
				rcode := cmp.Or(tc.rcode, dns.RcodeFormatError)
				m, wire := rawExchange(t, network, addr, tc.wire)
				if m.Rcode != rcode || m.Id != binary.BigEndian.Uint16(tc.wire) || m.Opcode != tc.opcode ||
					!m.Response || m.RecursionDesired == tc.noRD {
					t.Fatalf("rcode %s, id %#x, opcode %d, QR %v, RD %v; want %s, id %#x, opcode %d, QR, RD %v",
						dns.RcodeToString[m.Rcode], m.Id, m.Opcode, m.Response, m.RecursionDesired,
						dns.RcodeToString[rcode], binary.BigEndian.Uint16(tc.wire), tc.opcode, !tc.noRD)
				}
				if bits := binary.BigEndian.Uint16(wire[2:]); bits&(1<<10|1<<9|1<<7|1<<6|1<<5|1<<4) != 0 {
					t.Fatalf("flags %016b: AA, TC, RA, Z, AD or CD set", bits)
				}
				if len(m.Answer)+len(m.Ns)+len(m.Extra) != 0 {
					t.Fatalf("records in a FORMERR answer: %v", m)
				}
				switch {
				case tc.qname == "" && len(m.Question) != 0:
					t.Fatalf("question %v echoed from one that does not parse", m.Question)
				case tc.qname != "" && (len(m.Question) != 1 || m.Question[0].Name != tc.qname):
					t.Fatalf("question %v, want %s", m.Question, tc.qname)
				}
			})
		}
	}
}
