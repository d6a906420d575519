package xfr

import (
	"fmt"
	"net"
	"slices"
	"strings"
	"testing"

	"github.com/miekg/dns"
)

var queryZones = map[string][]string{
	"example.test.": {
		`web A 192.0.2.1`, `web A 192.0.2.2`, `web AAAA 2001:db8::1`, `web TXT "hello world"`,
		`a.b.c A 192.0.2.3`,
		`alias CNAME web.example.test.`,
		`chain CNAME alias.example.test.`,
		`out CNAME www.elsewhere.test.`,
		`dangling CNAME missing.example.test.`,
		`loop1 CNAME loop2.example.test.`, `loop2 CNAME loop1.example.test.`,
		`_http._tcp.svc SRV 0 10 80 web.example.test.`, `_http._tcp.svc SRV 0 10 8080 ext.other.test.`,
	},
	"sub.example.test.":     {`x A 192.0.2.9`},
	"2.0.192.in-addr.arpa.": {`1 PTR web.example.test.`},
}

const (
	exampleSOA = "example.test. 3600 IN SOA ns.example.test. hostmaster.example.test. %d 3600 600 604800 60"
	exampleNeg = "example.test. 60 IN SOA ns.example.test. hostmaster.example.test. %d 3600 600 604800 60"
)

type queryCase struct {
	name     string
	qname    string
	qtype    uint16
	qclass   uint16
	edns     int // EDNS0 version + 1; 0 for none
	rcode    int
	aa       bool
	answer   []string
	ns       []string
	extra    []string
	maxCount int // when set, only bounds the answer's length
}

func TestQueryAnswers(t *testing.T) {
	src := testStore(t, queryZones)
	s := New(testConfig(t, ""), src, Options{}, nil)
	serial := uint32(src.Snapshot("example.test.").Serial())
	soa := func(f string) string { return fmt.Sprintf(f, serial) }
	revSOA := fmt.Sprintf("2.0.192.in-addr.arpa. 60 IN SOA ns.example.test. hostmaster.example.test. %d 3600 600 604800 60",
		uint32(src.Snapshot("2.0.192.in-addr.arpa.").Serial()))
	cases := []queryCase{
		{name: "A", qname: "web.example.test.", qtype: dns.TypeA, aa: true,
			answer: []string{"web.example.test. 30 IN A 192.0.2.1", "web.example.test. 30 IN A 192.0.2.2"}},
		{name: "case preserved", qname: "WEB.Example.TEST.", qtype: dns.TypeA, aa: true,
			answer: []string{"WEB.Example.TEST. 30 IN A 192.0.2.1", "WEB.Example.TEST. 30 IN A 192.0.2.2"}},
		{name: "AAAA", qname: "web.example.test.", qtype: dns.TypeAAAA, aa: true,
			answer: []string{"web.example.test. 30 IN AAAA 2001:db8::1"}},
		{name: "TXT", qname: "web.example.test.", qtype: dns.TypeTXT, aa: true,
			answer: []string{`web.example.test. 30 IN TXT "hello world"`}},
		{name: "NODATA", qname: "web.example.test.", qtype: dns.TypeMX, aa: true, ns: []string{soa(exampleNeg)}},
		{name: "NXDOMAIN", qname: "nothing.example.test.", qtype: dns.TypeA, aa: true,
			rcode: dns.RcodeNameError, ns: []string{soa(exampleNeg)}},
		{name: "empty non-terminal", qname: "b.c.example.test.", qtype: dns.TypeA, aa: true, ns: []string{soa(exampleNeg)}},
		{name: "below a leaf", qname: "x.web.example.test.", qtype: dns.TypeA, aa: true,
			rcode: dns.RcodeNameError, ns: []string{soa(exampleNeg)}},
		{name: "apex SOA", qname: "example.test.", qtype: dns.TypeSOA, aa: true, answer: []string{soa(exampleSOA)}},
		{name: "apex NS", qname: "example.test.", qtype: dns.TypeNS, aa: true,
			answer: []string{"example.test. 3600 IN NS ns.example.test.", "example.test. 3600 IN NS ns2.example.test."}},
		{name: "apex NODATA", qname: "example.test.", qtype: dns.TypeA, aa: true, ns: []string{soa(exampleNeg)}},
		{name: "CNAME followed", qname: "alias.example.test.", qtype: dns.TypeA, aa: true,
			answer: []string{"alias.example.test. 30 IN CNAME web.example.test.",
				"web.example.test. 30 IN A 192.0.2.1", "web.example.test. 30 IN A 192.0.2.2"}},
		{name: "CNAME chain", qname: "chain.example.test.", qtype: dns.TypeAAAA, aa: true,
			answer: []string{"chain.example.test. 30 IN CNAME alias.example.test.",
				"alias.example.test. 30 IN CNAME web.example.test.", "web.example.test. 30 IN AAAA 2001:db8::1"}},
		{name: "CNAME asked for", qname: "alias.example.test.", qtype: dns.TypeCNAME, aa: true,
			answer: []string{"alias.example.test. 30 IN CNAME web.example.test."}},
		{name: "CNAME out of zone", qname: "out.example.test.", qtype: dns.TypeA, aa: true,
			answer: []string{"out.example.test. 30 IN CNAME www.elsewhere.test."}},
		{name: "CNAME to nothing", qname: "dangling.example.test.", qtype: dns.TypeA, aa: true, rcode: dns.RcodeNameError,
			answer: []string{"dangling.example.test. 30 IN CNAME missing.example.test."}, ns: []string{soa(exampleNeg)}},
		{name: "CNAME loop ends", qname: "loop1.example.test.", qtype: dns.TypeA, aa: true, maxCount: maxChain},
		{name: "SRV with addresses", qname: "_http._tcp.svc.example.test.", qtype: dns.TypeSRV, aa: true,
			answer: []string{"_http._tcp.svc.example.test. 30 IN SRV 0 10 80 web.example.test.",
				"_http._tcp.svc.example.test. 30 IN SRV 0 10 8080 ext.other.test."},
			extra: []string{"web.example.test. 30 IN A 192.0.2.1", "web.example.test. 30 IN A 192.0.2.2",
				"web.example.test. 30 IN AAAA 2001:db8::1"}},
		{name: "longest zone wins", qname: "x.sub.example.test.", qtype: dns.TypeA, aa: true,
			answer: []string{"x.sub.example.test. 30 IN A 192.0.2.9"}},
		{name: "child zone apex", qname: "sub.example.test.", qtype: dns.TypeSOA, aa: true,
			answer: []string{fmt.Sprintf("sub.example.test. 3600 IN SOA ns.example.test. hostmaster.example.test. %d 3600 600 604800 60",
				uint32(src.Snapshot("sub.example.test.").Serial()))}},
		{name: "outside every zone", qname: "www.other.test.", qtype: dns.TypeA, rcode: dns.RcodeRefused},
		{name: "whole labels only", qname: "notexample.test.", qtype: dns.TypeA, rcode: dns.RcodeRefused},
		{name: "zone not in store yet", qname: "empty.test.", qtype: dns.TypeSOA, rcode: dns.RcodeServerFailure},
		{name: "PTR", qname: "1.2.0.192.in-addr.arpa.", qtype: dns.TypePTR, aa: true,
			answer: []string{"1.2.0.192.in-addr.arpa. 30 IN PTR web.example.test."}},
		{name: "reverse NXDOMAIN", qname: "9.2.0.192.in-addr.arpa.", qtype: dns.TypePTR, aa: true,
			rcode: dns.RcodeNameError, ns: []string{revSOA}},
		{name: "reverse zone not held", qname: "1.1.0.192.in-addr.arpa.", qtype: dns.TypePTR, rcode: dns.RcodeRefused},
		{name: "ANY is one RRset", qname: "web.example.test.", qtype: dns.TypeANY, aa: true,
			answer: []string{"web.example.test. 30 IN A 192.0.2.1", "web.example.test. 30 IN A 192.0.2.2"}},
		{name: "ANY at the apex", qname: "example.test.", qtype: dns.TypeANY, aa: true, answer: []string{soa(exampleSOA)}},
		{name: "chaos class", qname: "web.example.test.", qtype: dns.TypeA, qclass: dns.ClassCHAOS, rcode: dns.RcodeRefused},
		{name: "EDNS version 1", qname: "web.example.test.", qtype: dns.TypeA, edns: 2, rcode: dns.RcodeBadVers},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := new(dns.Msg)
			r.SetQuestion(tc.qname, tc.qtype)
			if tc.qclass != 0 {
				r.Question[0].Qclass = tc.qclass
			}
			if tc.edns > 0 {
				r.SetEdns0(1232, false)
				r.IsEdns0().SetVersion(uint8(tc.edns - 1))
			}
			w := &recorder{remote: &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 5300}}
			s.ServeDNS(w, r)
			m := w.msg
			if m == nil {
				t.Fatal("no answer written")
			}
			if m.Rcode != tc.rcode || m.Authoritative != tc.aa || m.Id != r.Id {
				t.Fatalf("rcode %s aa %v id %d; want %s aa %v id %d", dns.RcodeToString[m.Rcode], m.Authoritative,
					m.Id, dns.RcodeToString[tc.rcode], tc.aa, r.Id)
			}
			if tc.maxCount > 0 {
				if len(m.Answer) == 0 || len(m.Answer) > tc.maxCount {
					t.Fatalf("answer has %d records, want 1..%d", len(m.Answer), tc.maxCount)
				}
				return
			}
			checkSection(t, "answer", m.Answer, tc.answer)
			checkSection(t, "authority", m.Ns, tc.ns)
			checkSection(t, "additional", withoutOPT(m.Extra), tc.extra)
		})
	}
}

func checkSection(t *testing.T, section string, got []dns.RR, want []string) {
	t.Helper()
	var g []string
	for _, rr := range got {
		g = append(g, strings.Join(strings.Fields(rr.String()), " "))
	}
	if !slices.Equal(g, want) {
		t.Errorf("%s section:\n got %q\nwant %q", section, g, want)
	}
}

func withoutOPT(rrs []dns.RR) []dns.RR {
	return slices.DeleteFunc(slices.Clone(rrs), func(rr dns.RR) bool { return rr.Header().Rrtype == dns.TypeOPT })
}

// recorder is a dns.ResponseWriter that keeps what is written.
type recorder struct {
	remote  net.Addr
	msg     *dns.Msg
	wire    int
	written int // octets written raw, as transfers do
}

func (w *recorder) LocalAddr() net.Addr  { return &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 53} }
func (w *recorder) RemoteAddr() net.Addr { return w.remote }
func (w *recorder) WriteMsg(m *dns.Msg) error {
	b, err := m.Pack()
	if err != nil {
		return err
	}
	w.wire = len(b)
	w.msg = m
	return nil
}
func (w *recorder) Write(b []byte) (int, error) { w.written += len(b); return len(b), nil }
func (w *recorder) Close() error                { return nil }
func (w *recorder) TsigStatus() error           { return nil }
func (w *recorder) TsigTimersOnly(bool)         {}
func (w *recorder) Hijack()                     {}
