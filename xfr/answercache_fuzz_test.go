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
	addQuerySeeds(f,
		querySeed{"web.example.test.", dns.TypeA, 0, false},
		querySeed{"WEB.example.test.", dns.TypeA, 1232, true},
		querySeed{"alias.example.test.", dns.TypeAAAA, 4096, false},
		querySeed{"_http._tcp.svc.example.test.", dns.TypeSRV, 1232, false},
		querySeed{"1.2.0.192.in-addr.arpa.", dns.TypePTR, 0, false},
		querySeed{"nope.example.test.", dns.TypeTXT, 512, false},
		querySeed{"x.sub.example.test.", dns.TypeA, 100, false},
		querySeed{"b.c.example.test.", dns.TypeA, 1232, false},
		querySeed{"nope.sub.example.test.", dns.TypeMX, 0, true},
		querySeed{"9.2.0.192.in-addr.arpa.", dns.TypePTR, 4096, false})
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

// querySeed is a query a fuzz test starts from: name, type, the EDNS
// payload size (0: no OPT record) and the DO bit.
type querySeed struct {
	name  string
	qtype uint16
	edns  int
	do    bool
}

// addQuerySeeds adds each seed, packed with ID 1 and RD set, to f's corpus.
func addQuerySeeds(f *testing.F, seeds ...querySeed) {
	for _, q := range seeds {
		f.Add(packQuery(f, 1, q.name, q.qtype, q.edns, q.do, true, false))
	}
}
