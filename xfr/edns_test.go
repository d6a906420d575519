package xfr

import (
	"bytes"
	"testing"

	"github.com/miekg/dns"
)

// FuzzCheckShape: whatever arrives, the shape check does not panic; it
// changes every message the library does not parse, and what it makes
// of one is a stand-in that parses, which ServeDNS answers FORMERR (or
// NOTIMP), with the header's first four octets kept and the question
// kept when the original's question was one and whole.
func FuzzCheckShape(f *testing.F) {
	q := new(dns.Msg).SetQuestion("web.example.test.", dns.TypeA)
	q.SetEdns0(1232, true)
	b, err := q.Pack()
	if err != nil {
		f.Fatal(err)
	}
	f.Add(b)
	f.Add(append(bytes.Clone(b), 0))
	f.Add(b[:len(b)-11])
	f.Fuzz(func(t *testing.T, packet []byte) {
		orig := bytes.Clone(packet)
		got := checkShape(packet)
		before := new(dns.Msg)
		parsed := before.Unpack(orig) == nil
		if bytes.Equal(got, orig) {
			if parsed || len(orig) < headerLen {
				return
			}
			t.Fatalf("a message the library does not parse is handed on: %x", orig)
		}
		m := new(dns.Msg)
		if err := m.Unpack(got); err != nil || ednsWellFormed(m) || !bytes.Equal(got[:4], orig[:4]) {
			t.Fatalf("stand-in %x (%v) for %x: want one that parses, with a misplaced OPT and the same ID and flags", got, err, orig)
		}
		// A whole question stays for the FORMERR answer to echo.
		if len(before.Question) == 1 && questionEnd(orig) > headerLen &&
			(len(m.Question) != 1 || m.Question[0] != before.Question[0]) {
			t.Fatalf("question %v lost: %v", before.Question, m.Question)
		}
	})
}

// BenchmarkCheckShape is what the reader adds to every request: the
// shape walk and a parse, which the library then does again.
func BenchmarkCheckShape(b *testing.B) {
	q := new(dns.Msg).SetQuestion("vm000123.inst.example.test.", dns.TypeA)
	q.SetEdns0(1232, false)
	msg, err := q.Pack()
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		if got := checkShape(msg); len(got) != len(msg) {
			b.Fatal("a well-formed query was changed")
		}
	}
}
