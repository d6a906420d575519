package conformance

import (
	"encoding/binary"
	"strconv"
	"strings"

	"github.com/miekg/dns"
)

// variants are the ways a query of the corpus differs from an ordinary
// one; the first, plain, is the ordinary one.
var variants = func() []variant {
	v := []variant{{name: "plain", apply: func(*build) {}}}
	for _, c := range []struct {
		name  string
		class uint16
	}{{"CH", dns.ClassCHAOS}, {"HS", dns.ClassHESIOD}, {"ANY", dns.ClassANY}, {"NONE", dns.ClassNONE}, {"unknown", 1234}} {
		v = append(v, variant{name: "class=" + c.name, apply: func(b *build) { b.m.Question[0].Qclass = c.class }})
	}
	for _, o := range []struct {
		name   string
		opcode int
	}{{"IQUERY", 1}, {"STATUS", 2}, {"3", 3}, {"NOTIFY", 4}, {"UPDATE", 5}, {"6", 6}, {"15", 15}} {
		v = append(v, variant{name: "opcode=" + o.name, apply: func(b *build) { b.m.Opcode = o.opcode }})
	}
	for _, f := range []struct {
		name string
		set  func(m *dns.Msg)
	}{
		{"RD", func(m *dns.Msg) { m.RecursionDesired = true }},
		{"CD", func(m *dns.Msg) { m.CheckingDisabled = true }},
		{"AD", func(m *dns.Msg) { m.AuthenticatedData = true }},
		{"TC", func(m *dns.Msg) { m.Truncated = true }},
		{"QR", func(m *dns.Msg) { m.Response = true }},
		{"Z", func(m *dns.Msg) { m.Zero = true }},
		{"RA", func(m *dns.Msg) { m.RecursionAvailable = true }},
		{"AA", func(m *dns.Msg) { m.Authoritative = true }},
	} {
		v = append(v, variant{name: "flag=" + f.name, apply: func(b *build) { f.set(b.m) }})
	}
	v = append(v, variant{name: "edns=none", apply: func(b *build) { b.opt = nil }})
	for _, size := range []uint16{0, 512, 1232, 1400, 4096, 65535} {
		v = append(v, variant{name: "edns=" + strconv.Itoa(int(size)), apply: func(b *build) {
			b.bigName()
			b.opt = newOPT(size)
		}})
	}
	return append(v, oddVariants...)
}()

// oddVariants are the EDNS, TSIG, count, question and wire oddities.
var oddVariants = []variant{
	{name: "edns=DO", apply: func(b *build) { b.opt = newOPT(1232); b.opt.SetDo() }},
	{name: "edns=DO-no-size", apply: func(b *build) { b.opt = newOPT(0); b.opt.SetDo() }},
	{name: "edns=unknown-option", apply: func(b *build) {
		b.opt = newOPT(1232)
		b.opt.Option = append(b.opt.Option, &dns.EDNS0_LOCAL{Code: 65001, Data: []byte("cnsd")})
	}},
	{name: "edns=cookie", apply: func(b *build) {
		b.opt = newOPT(1232)
		b.opt.Option = append(b.opt.Option, &dns.EDNS0_COOKIE{Code: dns.EDNS0COOKIE, Cookie: "0102030405060708"})
	}},
	{name: "edns=cookie-bad-length", apply: func(b *build) {
		b.opt = newOPT(1232)
		b.opt.Option = append(b.opt.Option, &dns.EDNS0_LOCAL{Code: dns.EDNS0COOKIE, Data: []byte{1, 2, 3, 4, 5}})
	}},
	{name: "edns=nsid", apply: func(b *build) {
		b.opt = newOPT(1232)
		b.opt.Option = append(b.opt.Option, &dns.EDNS0_NSID{Code: dns.EDNS0NSID})
	}},
	{name: "edns=version1", apply: func(b *build) { b.opt = newOPT(1232); b.opt.SetVersion(1) }},
	{name: "edns=unknown-flag", apply: func(b *build) { b.opt = newOPT(1232); b.opt.Hdr.Ttl |= 0x0001 }},
	{name: "edns=two-opt", apply: func(b *build) { b.opt = newOPT(1232); b.extra = append(b.extra, newOPT(4096)) }},
	{name: "edns=opt-not-root", apply: func(b *build) { b.opt = newOPT(1232); b.opt.Hdr.Name = "example." }},
	{name: "edns=opt-in-answer", apply: func(b *build) { b.opt = nil; b.m.Answer = []dns.RR{newOPT(1232)} }},
	{name: "arcount=more", apply: func(b *build) { b.opt = newOPT(1232); b.mutate = setCount(3, 2) }},
	{name: "arcount=less", apply: func(b *build) { b.opt = newOPT(1232); b.mutate = setCount(3, 0) }},
	{name: "qdcount=0", apply: func(b *build) { b.m.Question = nil; b.kind, b.qtype = "none", 0 }},
	{name: "qdcount=2", apply: func(b *build) {
		b.m.Question = append(b.m.Question, dns.Question{Name: b.g.pick("existing"), Qtype: dns.TypeA, Qclass: dns.ClassINET})
	}},
	{name: "ancount=1", apply: func(b *build) {
		b.m.Answer = []dns.RR{&dns.A{Hdr: dns.RR_Header{Name: b.m.Question[0].Name, Rrtype: dns.TypeA, Class: dns.ClassINET, Ttl: 30}, A: []byte{192, 0, 2, 1}}}
	}},
	{name: "nscount=1", apply: func(b *build) {
		b.m.Ns = []dns.RR{&dns.NS{Hdr: dns.RR_Header{Name: b.m.Question[0].Name, Rrtype: dns.TypeNS, Class: dns.ClassINET, Ttl: 30}, Ns: "ns.example."}}
	}},
	{name: "tsig=unknown-key", apply: func(b *build) { b.tsig = true }},
	{name: "qtype=meta", apply: func(b *build) {
		meta := []uint16{dns.TypeMAILA, dns.TypeMAILB, dns.TypeNone, dns.TypeOPT, dns.TypeTSIG, dns.TypeTKEY}
		b.qtype = meta[b.g.rng.IntN(len(meta))]
		b.m.Question[0].Qtype = b.qtype
	}},
	{name: "qtype=xfr", udpOnly: true, apply: func(b *build) {
		b.kind = "apex"
		b.m.Question[0].Name = b.g.pick("apex")
		b.qtype = []uint16{dns.TypeAXFR, dns.TypeIXFR}[b.g.rng.IntN(2)]
		b.m.Question[0].Qtype = b.qtype
		if b.qtype == dns.TypeIXFR {
			b.m.Ns = []dns.RR{&dns.SOA{Hdr: dns.RR_Header{Name: b.m.Question[0].Name, Rrtype: dns.TypeSOA, Class: dns.ClassINET},
				Ns: "ns1.example.test.", Mbox: "hostmaster.example.test.", Serial: 1}}
		}
	}},
	{name: "wire=truncated", apply: func(b *build) {
		b.mutate = func(p []byte) []byte { return p[:12+b.g.rng.IntN(len(p)-12)] }
	}},
	{name: "wire=short-header", apply: func(b *build) {
		b.mutate = func(p []byte) []byte { return p[:b.g.rng.IntN(12)] }
	}},
	{name: "wire=garbage", apply: func(b *build) {
		p := make([]byte, 12+b.g.rng.IntN(80))
		for i := range p {
			p[i] = byte(b.g.rng.Uint32())
		}
		p[2] &^= 0x80 // QR clear: a query, not a response to drop
		b.raw, b.kind, b.qtype = p, "none", 0
	}},
	{name: "wire=pointer-loop", apply: func(b *build) {
		p := binary.BigEndian.AppendUint16(nil, b.g.id)
		p = append(p, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0) // flags, QDCOUNT 1
		p = append(p, 0xc0, 12, 0, 1, 0, 1)         // a name that points at itself, A IN
		b.raw, b.kind, b.qtype = p, "none", 0
	}},
	{name: "wire=trailing-octets", apply: func(b *build) {
		b.mutate = func(p []byte) []byte { return append(p, 0xde, 0xad, 0xbe, 0xef) }
	}},
}

// bigName makes the query, half the time, one for a name and type with
// several records, so that payload sizes matter.
func (b *build) bigName() {
	if b.g.rng.IntN(2) == 0 {
		return
	}
	b.kind = "big"
	n := b.g.pick("big")
	name, t, _ := strings.Cut(n, "/")
	b.qtype = dns.StringToType[t]
	b.m.Question[0].Name, b.m.Question[0].Qtype = name, b.qtype
}
