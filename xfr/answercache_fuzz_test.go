package xfr

import (
	"bytes"
	"testing"

	"github.com/miekg/dns"
)

// FuzzAnswerCache: whatever arrives, the answer cache either declines
// it or answers it with exactly the octets the full path sends. Each
// packet first goes the full path, which may cache its answer, so that
// every packet the cache would take is also tried against it.
func FuzzAnswerCache(f *testing.F) {
	for _, q := range []struct {
		name  string
		qtype uint16
		edns  int
		do    bool
	}{
		{"web.example.test.", dns.TypeA, 0, false},
		{"WEB.example.test.", dns.TypeA, 1232, true},
		{"alias.example.test.", dns.TypeAAAA, 4096, false},
		{"_http._tcp.svc.example.test.", dns.TypeSRV, 1232, false},
		{"1.2.0.192.in-addr.arpa.", dns.TypePTR, 0, false},
		{"nope.example.test.", dns.TypeTXT, 512, false},
		{"x.sub.example.test.", dns.TypeA, 100, false},
	} {
		f.Add(packQuery(f, 1, q.name, q.qtype, q.edns, q.do, true, false))
	}
	s := New(testConfig(f, noRRL), testStore(f, queryZones), Options{}, nil)
	f.Fuzz(func(t *testing.T, packet []byte) {
		fullPath(s, packet, true)
		got, ok := fastPath(s, packet)
		if !ok {
			return
		}
		if want := fullPath(s, packet, false); !bytes.Equal(got, want) {
			t.Fatalf("request %x:\ncache     %x\nfull path %x", packet, got, want)
		}
	})
}
