package xfr

import (
	"bytes"
	"testing"

	"github.com/miekg/dns"
)

// FuzzCheckShape: whatever arrives, the shape check does not panic, and
// what it changes is a message the library rejects, with the question
// kept when the original's question was whole.
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
		if bytes.Equal(got, orig) {
			return
		}
		m := new(dns.Msg)
		if err := m.Unpack(got); err == nil {
			t.Fatalf("a message the check changed unpacks: %v", m)
		}
		// A whole question stays for the FORMERR answer to echo.
		if before := new(dns.Msg); len(got) > headerLen+1 && before.Unpack(orig) == nil && len(before.Question) == 1 &&
			(len(m.Question) != 1 || m.Question[0] != before.Question[0]) {
			t.Fatalf("question %v lost: %v", before.Question, m.Question)
		}
	})
}
