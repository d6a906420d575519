package xfr

import (
	"encoding/binary"
	"errors"
	"strings"
	"testing"

	"github.com/miekg/dns"

	"github.com/cnsd/cnsd/store"
)

// wireCases are records of every type zonegen emits, one of a type it
// does not (through the zone-file parser), and odd inputs.
var wireCases = []struct {
	name string
	rec  store.Record
}{
	{"A", rec("vm.inst.example.test.", "A", "192.0.2.1")},
	{"A mapped", rec("vm.inst.example.test.", "A", "::ffff:192.0.2.1")},
	{"A bad", rec("vm.inst.example.test.", "A", "192.0.2.256")},
	{"A leading zero", rec("vm.inst.example.test.", "A", "192.0.2.01")},
	{"A v6", rec("vm.inst.example.test.", "A", "2001:db8::1")},
	{"AAAA", rec("vm.inst.example.test.", "AAAA", "2001:db8::1")},
	{"AAAA zone", rec("vm.inst.example.test.", "AAAA", "fe80::1%eth0")},
	{"AAAA v4", rec("vm.inst.example.test.", "AAAA", "192.0.2.1")},
	{"AAAA mapped", rec("vm.inst.example.test.", "AAAA", "::ffff:192.0.2.1")},
	{"PTR", rec("1.2.0.192.in-addr.arpa.", "PTR", "vm.inst.example.test.")},
	{"PTR relative", rec("1.2.0.192.in-addr.arpa.", "PTR", "vm.inst")},
	{"PTR escaped", rec("1.2.0.192.in-addr.arpa.", "PTR", `v\.m.inst.example.test.`)},
	{"PTR DDD", rec("1.2.0.192.in-addr.arpa.", "PTR", `v\065m.example.test.`)},
	{"NS", rec("example.test.", "NS", "ns1.example.test.")},
	{"NS root", rec("example.test.", "NS", ".")},
	{"CNAME", rec("www.example.test.", "CNAME", "vm.inst.example.test.")},
	{"CNAME upper", rec("www.example.test.", "CNAME", "VM.Inst.Example.TEST.")},
	{"CNAME empty label", rec("www.example.test.", "CNAME", "vm..example.test.")},
	{"CNAME long label", rec("www.example.test.", "CNAME", strings.Repeat("a", 64)+".example.test.")},
	{"CNAME 63", rec("www.example.test.", "CNAME", strings.Repeat("a", 63)+".example.test.")},
	{"CNAME long name", rec("www.example.test.", "CNAME", strings.Repeat("abcdefg.", 32)+"test.")},
	{"CNAME 254", rec("www.example.test.", "CNAME", strings.Repeat("abc.", 62)+"test.")},
	{"SRV", rec("_http._tcp.svc.example.test.", "SRV", "0 10 80 vm.inst.example.test.")},
	{"SRV spaces", rec("_http._tcp.svc.example.test.", "SRV", " 0\t10  080 vm.inst.example.test. ")},
	{"SRV big port", rec("_http._tcp.svc.example.test.", "SRV", "0 10 65536 vm.inst.example.test.")},
	{"SRV sign", rec("_http._tcp.svc.example.test.", "SRV", "+0 10 80 vm.inst.example.test.")},
	{"SRV short", rec("_http._tcp.svc.example.test.", "SRV", "0 10 80")},
	{"SRV relative", rec("_http._tcp.svc.example.test.", "SRV", "0 10 80 vm")},
	{"SRV zeros", rec("_http._tcp.svc.example.test.", "SRV", "00 010 00080 vm.inst.example.test.")},
	{"SRV max", rec("_http._tcp.svc.example.test.", "SRV", "65535 65535 65535 vm.inst.example.test.")},
	{"SRV target space", rec("_http._tcp.svc.example.test.", "SRV", "0 10 80 vm.inst.example.test.\u00a0")},
	{"SRV target DEL", rec("_http._tcp.svc.example.test.", "SRV", "0 10 80 vm.inst.example\x7ftest.")},
	{"TXT", rec("vm.inst.example.test.", "TXT", `"0f1e2d3c-4b5a-4c8a-9d2f-000000000001"`)},
	{"TXT several", rec("vm.inst.example.test.", "TXT", `"a" "b c"  ""`)},
	{"TXT escapes", rec("vm.inst.example.test.", "TXT", `"say \"hi\" \\ \065\066 \999 \x"`)},
	{"TXT unquoted", rec("vm.inst.example.test.", "TXT", `abc`)},
	{"TXT open", rec("vm.inst.example.test.", "TXT", `"abc`)},
	{"TXT none", rec("vm.inst.example.test.", "TXT", ``)},
	{"TXT 255", rec("vm.inst.example.test.", "TXT", `"`+strings.Repeat("x", 255)+`"`)},
	{"TXT 256", rec("vm.inst.example.test.", "TXT", `"`+strings.Repeat("x", 256)+`"`)},
	{"TXT 255 escaped", rec("vm.inst.example.test.", "TXT", `"`+strings.Repeat(`\120`, 255)+`"`)},
	{"MX", rec("example.test.", "MX", "10 mail.example.test.")},
	{"MX bad", rec("example.test.", "MX", "ten mail.example.test.")},
	{"owner escaped", rec(`v\.m.inst.example.test.`, "A", "192.0.2.1")},
	{"owner long label", rec(strings.Repeat("a", 64)+".example.test.", "A", "192.0.2.1")},
	{"owner long", rec(strings.Repeat("abcdefg.", 32)+"test.", "A", "192.0.2.1")},
	{"owner empty label", rec("a..example.test.", "A", "192.0.2.1")},
	{"A zeros", rec("vm.inst.example.test.", "A", "0.0.0.0")},
	{"A short", rec("vm.inst.example.test.", "A", "10.1.2")},
	{"A long octet", rec("vm.inst.example.test.", "A", "10.1.2.2555")},
	{"SRV tab target", rec("_http._tcp.svc.example.test.", "SRV", "0 10 80 vm.inst.\texample.test.")},
	{"SRV two spaces", rec("_http._tcp.svc.example.test.", "SRV", "0  10 80 vm.inst.example.test.")},
	{"SRV nbsp", rec("_http._tcp.svc.example.test.", "SRV", "0 10 80 vm.inst.example.test.\u00a0")},
	{"TXT inner quote", rec("vm.inst.example.test.", "TXT", `"a"b"`)},
	{"TXT two", rec("vm.inst.example.test.", "TXT", `"a""b"`)},
	{"root owner", rec(".", "A", "192.0.2.1")},
	{"owner apex", rec("example.test.", "A", "192.0.2.1")},
	{"owner other zone", rec("vm.example.other.", "A", "192.0.2.1")},
}

func TestAppendRecord(t *testing.T) {
	for _, c := range wireCases {
		t.Run(c.name, func(t *testing.T) { checkWire(t, c.rec) })
	}
}

func FuzzAppendRecord(f *testing.F) {
	for _, c := range wireCases {
		f.Add(c.rec.Name, uint16(c.rec.Type), c.rec.Data)
	}
	f.Fuzz(func(t *testing.T, name string, typ uint16, data string) {
		if strings.HasPrefix(name, "$") {
			// A zone-file directive ($GENERATE, $INCLUDE) to the parser
			// toRR falls back on; stored names never start so.
			t.Skip()
		}
		r := store.Record{Name: name, Data: data, Source: "fuzz"}
		setType(&r.Type, typ)
		checkWire(t, r)
	})
}

// checkWire writes r with appendRecord into a message between records
// that share names with it, and checks that the message decodes and
// that r decodes to what toRR gives and miekg/dns packs; a record toRR
// or miekg/dns refuses must be refused.
func checkWire(t *testing.T, r store.Record) {
	t.Helper()
	want, wantOK := viaMiekg(r)
	var nw nameWriter
	b := make([]byte, headerLen)
	binary.BigEndian.PutUint16(b[2:], 1<<15|1<<10)
	binary.BigEndian.PutUint16(b[4:], 1)
	b = append(b, "\x07example\x04test\x00\x00\xfc\x00\x01"...)
	nw.resetMessage("example.test.")
	before := rec("x."+r.Name, "A", "192.0.2.9")
	after := rec("y."+r.Name, "CNAME", "z."+r.Data)
	n, written := 0, 0
	for i, rr := range []store.Record{rec("vm.inst.example.test.", "A", "192.0.2.8"), before, r, after, r} {
		nb, err := nw.appendRecord(b, rr, 30)
		if err != nil {
			if !errors.Is(err, errBadRecord) {
				t.Fatalf("record %d: error %v does not wrap errBadRecord", i, err)
			}
			if len(nb) != len(b) {
				t.Fatalf("record %d: refused, but the message grew", i)
			}
			continue
		}
		if i == 2 || i == 4 {
			written++
		}
		b = nb
		n++
	}
	binary.BigEndian.PutUint16(b[6:], uint16(n))
	m := new(dns.Msg)
	if err := m.Unpack(b); err != nil {
		t.Fatalf("%v: message does not decode: %v", r, err)
	}
	gotOK := written == 2
	if gotOK != wantOK {
		t.Fatalf("%v: appendRecord accepts it: %v; toRR and miekg/dns: %v (%s)", r, gotOK, wantOK, want)
	}
	if !wantOK {
		return
	}
	var seen int
	for _, rr := range m.Answer {
		if rr.Header().Rrtype == uint16(r.Type) && rr.String() == want {
			seen++
		}
	}
	if seen < 2 {
		t.Errorf("%v: want %s twice, got %v", r, want, m.Answer)
	}
}

// viaMiekg is r as toRR builds it and miekg/dns packs and parses it,
// in presentation form; ok is false when that fails anywhere.
func viaMiekg(r store.Record) (string, bool) {
	rr, err := toRR(r, 30)
	if err != nil {
		return err.Error(), false
	}
	if rr.Header().Name == "" {
		return "no owner: miekg/dns would pack a message it misreads", false
	}
	m := new(dns.Msg)
	m.Answer = []dns.RR{rr}
	b, err := m.Pack()
	if err != nil {
		return err.Error(), false
	}
	if err := m.Unpack(b); err != nil || len(m.Answer) != 1 {
		return "does not decode", false
	}
	return m.Answer[0].String(), true
}

// setType sets a record's type, whose named type is zonegen's, which xfr
// may not import.
func setType[T ~uint16](p *T, v uint16) { *p = T(v) }

// TestAppendSOA: the SOA written with compressed names decodes to the
// record given, after records that share its names and before one that
// points into it.
func TestAppendSOA(t *testing.T) {
	for _, c := range []struct{ name, owner, ns, mbox string }{
		{"apex", "example.test.", "ns1.example.test.", "hostmaster.example.test."},
		{"escaped mailbox", "example.test.", "ns1.other.test.", `first\.last.example.test.`},
		{"other zone", "2.0.192.in-addr.arpa.", "ns1.example.test.", "hostmaster.example.test."},
		{"root", ".", ".", "."},
	} {
		t.Run(c.name, func(t *testing.T) {
			soa := &dns.SOA{Hdr: dns.RR_Header{Name: c.owner, Rrtype: dns.TypeSOA, Class: dns.ClassINET, Ttl: 3600},
				Ns: c.ns, Mbox: c.mbox, Serial: 7, Refresh: 1, Retry: 2, Expire: 3, Minttl: 4}
			var nw nameWriter
			b := make([]byte, headerLen)
			binary.BigEndian.PutUint16(b[4:], 1)
			b = append(b, "\x07example\x04test\x00\x00\xfc\x00\x01"...)
			nw.resetMessage("example.test.")
			b, err := nw.appendRecord(b, rec("a.example.test.", "A", "192.0.2.1"), 30)
			if err != nil {
				t.Fatal(err)
			}
			b, ok := nw.appendSOA(b, soa)
			if !ok {
				t.Fatal("not written")
			}
			if b, err = nw.appendRecord(b, rec("b."+strings.TrimPrefix(c.owner, "."), "A", "192.0.2.2"), 30); err != nil {
				t.Fatal(err)
			}
			binary.BigEndian.PutUint16(b[6:], 3)
			m := new(dns.Msg)
			if err := m.Unpack(b); err != nil {
				t.Fatal(err)
			}
			if got := m.Answer[1].String(); got != soa.String() {
				t.Errorf("got  %s\nwant %s", got, soa.String())
			}
		})
	}
}
