package xfr

import (
	"fmt"
	"net"
	"testing"
	"time"

	"github.com/miekg/dns"

	"github.com/cnsd/cnsd/store"
)

// BenchmarkUDPQuery measures a query end to end over loopback UDP: the
// socket read, the hand-over to a worker, the answer and the write, with
// four clients one query in flight each. BenchmarkQuery measures the
// handler alone.
func BenchmarkUDPQuery(b *testing.B) {
	recs := make([]store.Record, 0, 10_000)
	for i := range cap(recs) {
		recs = append(recs, rec(fmt.Sprintf("vm%05d.example.test.", i), "A", fmt.Sprintf("10.0.%d.%d", i>>8, i&255)))
	}
	src := testStore(b, nil)
	if _, err := src.CommitSource(b.Context(), "bench", map[string][]store.Record{"example.test.": recs}); err != nil {
		b.Fatal(err)
	}
	addr, _ := serve(b, testConfig(b, `, "rrl": {"disabled": true}`), src, Options{})
	b.SetParallelism(2)
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		c, err := net.Dial("udp", addr)
		if err != nil {
			b.Error(err)
			return
		}
		defer c.Close()
		buf := make([]byte, 1500)
		for i := 0; pb.Next(); i++ {
			q, _ := new(dns.Msg).SetQuestion(fmt.Sprintf("vm%05d.example.test.", i%10_000), dns.TypeA).Pack()
			_ = c.SetDeadline(time.Now().Add(time.Second))
			if _, err := c.Write(q); err != nil {
				b.Error(err)
				return
			}
			if _, err := c.Read(buf); err != nil {
				b.Error(err)
				return
			}
		}
	})
}
