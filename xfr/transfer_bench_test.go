package xfr

import (
	"context"
	"fmt"
	"net"
	"sync"
	"testing"
	"time"

	"github.com/miekg/dns"

	"github.com/cnsd/cnsd/store"
)

// benchZone fills a store with a zone shaped like cnsd's: per instance an
// A record and a TXT record with its UUID, so records/2 names.
func benchZone(b *testing.B, records int) *store.Store {
	recs := make([]store.Record, 0, records)
	for i := range records / 2 {
		name := fmt.Sprintf("%08x-4b6e-4c8a-9d2f-%012x.inst.example.test.", i, i)
		recs = append(recs, rec(name, "A", fmt.Sprintf("10.%d.%d.%d", i>>16&255, i>>8&255, i&255)),
			rec(name, "TXT", fmt.Sprintf(`"%08x-4b6e-4c8a-9d2f-%012x"`, i, i)))
	}
	return storeOf(b, recs)
}

// storeOf opens a store over Memory holding recs in example.test.
func storeOf(b *testing.B, recs []store.Record) *store.Store {
	b.Helper()
	ctx := context.Background()
	src, err := store.Open(ctx, store.NewMemory(), store.Options{}, nil)
	if err != nil {
		b.Fatal(err)
	}
	if _, err := src.CommitSource(ctx, "bench", map[string][]store.Record{"example.test.": recs}); err != nil {
		b.Fatal(err)
	}
	return src
}

var (
	bench1M     *store.Store
	bench1MOnce sync.Once
)

// BenchmarkAXFR transfers a whole zone over loopback TCP: time per
// transfer, and the messages and octets it takes.
func BenchmarkAXFR(b *testing.B) {
	for _, size := range []int{100_000, 1_000_000} {
		b.Run(fmt.Sprintf("records=%d", size), func(b *testing.B) {
			if size > 100_000 && testing.Short() {
				b.Skip("1M records: not under -short")
			}
			var src *store.Store
			if size == 1_000_000 {
				bench1MOnce.Do(func() { bench1M = benchZone(b, size) })
				src = bench1M
			} else {
				src = benchZone(b, size)
			}
			addr, s := serve(b, testConfig(b, loopbackTransfers), src, Options{})
			before := s.TransferCounts()
			var recs int
			for b.Loop() {
				recs = axfrOnce(b, addr)
			}
			after := countedAfter(b, s, before, b.N)
			n := float64(after.AXFR - before.AXFR)
			b.ReportMetric(float64(after.Messages-before.Messages)/n, "msgs/op")
			b.ReportMetric(float64(after.Bytes-before.Bytes)/n, "wire-bytes/op")
			b.ReportMetric(float64(recs)*n/b.Elapsed().Seconds(), "records/s")
		})
	}
}

// BenchmarkIXFR100Changes: a client 100 serials behind, one record
// changed in each, on a zone of 100k records.
func BenchmarkIXFR100Changes(b *testing.B) {
	src := benchZone(b, 100_000)
	ctx := context.Background()
	from := uint32(src.Snapshot("example.test.").Serial())
	for i := range 100 {
		if _, err := src.CommitSource(ctx, fmt.Sprint("change", i), map[string][]store.Record{
			"example.test.": {rec(fmt.Sprintf("changed%d.example.test.", i), "A", "192.0.2.1")}}); err != nil {
			b.Fatal(err)
		}
	}
	addr, s := serve(b, testConfig(b, loopbackTransfers), src, Options{})
	before := s.TransferCounts()
	var recs int
	for b.Loop() {
		m := new(dns.Msg)
		m.SetIxfr("example.test.", from, "ns.example.test.", "hostmaster.example.test.")
		ch, err := (&dns.Transfer{}).In(m, addr)
		if err != nil {
			b.Fatal(err)
		}
		recs = 0
		for env := range ch {
			if env.Error != nil {
				b.Fatal(env.Error)
			}
			recs += len(env.RR)
		}
	}
	after := countedAfter(b, s, before, b.N)
	n := float64(after.IXFR - before.IXFR)
	b.ReportMetric(float64(recs), "records/op")
	b.ReportMetric(float64(after.Bytes-before.Bytes)/n, "wire-bytes/op")
}

// countedAfter waits until the server has counted n more transfers than
// in before and returns its counts. The server counts a transfer after
// writing its last message, so a client that has read that message can
// be done before the count is made: read at once, the counts could miss
// the last transfers, or all of them (0 transfers: NaN per op).
func countedAfter(b *testing.B, s *Server, before TransferCounts, n int) TransferCounts {
	b.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		c := s.TransferCounts()
		if c.AXFR+c.IXFR-before.AXFR-before.IXFR >= uint64(n) {
			return c
		}
		if time.Now().After(deadline) {
			b.Fatalf("the server counted %d of %d transfers after 10 s", c.AXFR+c.IXFR-before.AXFR-before.IXFR, n)
		}
		time.Sleep(time.Millisecond)
	}
}

func axfrOnce(b *testing.B, addr string) (recs int) {
	m := new(dns.Msg)
	m.SetAxfr("example.test.")
	ch, err := (&dns.Transfer{}).In(m, addr)
	if err != nil {
		b.Fatal(err)
	}
	for env := range ch {
		if env.Error != nil {
			b.Fatal(env.Error)
		}
		recs += len(env.RR)
	}
	return recs
}

// BenchmarkAXFRServerSide is the server's work alone for an AXFR of 100k
// records — conversion, packing, compression — written to a discarding
// connection.
func BenchmarkAXFRServerSide(b *testing.B) {
	src := benchZone(b, 100_000)
	s := New(testConfig(b, loopbackTransfers), src, Options{}, nil)
	st := s.settings()
	r := new(dns.Msg).SetAxfr("example.test.")
	b.ReportAllocs()
	for b.Loop() {
		w := &recorder{remote: &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 5300}}
		s.serveAXFR(w, r, st)
		if w.written == 0 {
			b.Fatal("nothing written")
		}
	}
}
