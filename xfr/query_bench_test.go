package xfr

import (
	"context"
	"fmt"
	"net"
	"sync/atomic"
	"testing"
	"time"

	"github.com/miekg/dns"

	"github.com/cnsd/cnsd/store"
)

// BenchmarkQuery measures the handler's work per query — lookup, answer
// building and packing — on a zone of 100k instance names, without the
// socket. The end-to-end figure with sockets is in the Knot comparison.
func BenchmarkQuery(b *testing.B) {
	const names = 100_000
	ctx := context.Background()
	src, err := store.Open(ctx, store.NewMemory(), store.Options{}, nil)
	if err != nil {
		b.Fatal(err)
	}
	recs := make([]store.Record, 0, 2*names)
	for i := range names {
		name := fmt.Sprintf("vm%06d.inst.example.test.", i)
		recs = append(recs, rec(name, "A", fmt.Sprintf("10.%d.%d.%d", i>>16, i>>8&255, i&255)),
			rec(name, "TXT", fmt.Sprintf(`"%08x-0000-4000-8000-000000000000"`, i)))
	}
	if _, err := src.CommitSource(ctx, "bench", map[string][]store.Record{"example.test.": recs}); err != nil {
		b.Fatal(err)
	}
	// A clock that moves 100 ms per reading keeps the client under any
	// rate limit, so every query takes the whole path and is answered.
	var tick atomic.Int64
	start := time.Now()
	clock := func() time.Time { return start.Add(time.Duration(tick.Add(1)) * 100 * time.Millisecond) }
	s := New(testConfig(b, ""), src, Options{Clock: clock}, nil)
	for _, bc := range []struct {
		name  string
		qname func(i int) string
		qtype uint16
	}{
		{"A", func(i int) string { return fmt.Sprintf("vm%06d.inst.example.test.", i%names) }, dns.TypeA},
		{"TXT", func(i int) string { return fmt.Sprintf("vm%06d.inst.example.test.", i%names) }, dns.TypeTXT},
		{"NXDOMAIN", func(i int) string { return fmt.Sprintf("no%06d.inst.example.test.", i%names) }, dns.TypeA},
	} {
		b.Run(bc.name, func(b *testing.B) {
			reqs := make([]*dns.Msg, 1024)
			for i := range reqs {
				reqs[i] = new(dns.Msg).SetQuestion(bc.qname(i*97), bc.qtype)
			}
			w := &recorder{remote: &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 5300}}
			b.ReportAllocs()
			for i := 0; b.Loop(); i++ {
				s.ServeDNS(w, reqs[i%len(reqs)])
			}
		})
	}
}
