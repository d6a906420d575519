package knotbench

import (
	"fmt"
	"testing"
	"time"

	"github.com/miekg/dns"
)

// ixfrBehind is how many serials behind the IXFR client is.
const ixfrBehind = 100

// BenchmarkIXFR asks cnsd and Knot for the changes since a serial
// ixfrBehind commits back, each commit adding one record: wall time,
// messages, octets and server CPU per IXFR, and the ratio cnsd/Knot.
// Knot serves the changesets its journal keeps from knotc
// transactions; NSD 4.6 serves IXFR only for zones it receives by
// transfer, so it is not compared. The changes are made once per zone
// size, after which the AXFR figures include the 100 records.
//
//	go test ./xfr/knotbench -run '^$' -bench IXFR -benchtime 20x -v -knotbench.records 100000
func BenchmarkIXFR(b *testing.B) {
	for _, n := range sizes(b) {
		b.Run(fmt.Sprintf("records=%d", n), func(b *testing.B) {
			p := setup(b, n)
			from := p.changed(b)
			res := make([]result, 2)
			var xfers [2]Transfer
			for i, s := range p.servers() {
				b.Run("server="+s.Name, func(b *testing.B) { res[i], xfers[i] = benchIXFR(b, s, from[i]) })
			}
			c, k := xfers[0], xfers[1]
			logRatio(b, "IXFR", [2]result{res[0], res[1]})
			b.Logf("IXFR on the wire: cnsd %d messages, %d octets, %d records; Knot %d, %d, %d; cnsd/Knot octets %.2f",
				c.Messages, c.Bytes, c.Records, k.Messages, k.Bytes, k.Records, float64(c.Bytes)/float64(k.Bytes))
		})
	}
}

// changed makes each server of the pair commit ixfrBehind changes, the
// first time, and returns the serial each served before them.
func (p *pair) changed(tb testing.TB) [2]uint32 {
	tb.Helper()
	pairsMu.Lock()
	defer pairsMu.Unlock()
	if p.ixfrFrom != nil {
		return *p.ixfrFrom
	}
	var from [2]uint32
	for i, s := range p.servers() {
		apex, err := Apex(s.UDP)
		if err != nil {
			tb.Fatalf("%s: %v", s.Name, err)
		}
		from[i] = apex[0].(*dns.SOA).Serial
		start := time.Now()
		if err := s.Change(0, ixfrBehind); err != nil {
			tb.Fatal(err)
		}
		tb.Logf("%s: %d commits in %v", s.Name, ixfrBehind, time.Since(start).Round(time.Millisecond))
	}
	p.ixfrFrom = &from
	return from
}

func benchIXFR(b *testing.B, s *Server, from uint32) (result, Transfer) {
	cpu0 := serverCPU(b, s)
	var t Transfer
	var second dns.RR
	for b.Loop() {
		var err error
		n := 0
		if t, err = IXFR(s.TCP, from, func(rr dns.RR) {
			if n++; n == 2 {
				second = rr
			}
		}); err != nil {
			b.Fatalf("%s: %v", s.Name, err)
		}
	}
	// RFC 1995 §4: an incremental answer's second record is the SOA of
	// the client's serial; anything else is the whole zone.
	if soa, ok := second.(*dns.SOA); !ok || soa.Serial != from {
		b.Fatalf("%s: not an incremental transfer from %d: second record %v", s.Name, from, second)
	}
	cpu := serverCPU(b, s) - cpu0
	ops := time.Duration(b.N)
	b.ReportMetric(float64(t.Messages), "msgs/op")
	b.ReportMetric(float64(t.Bytes), "wire-bytes/op")
	b.ReportMetric(float64(t.Records), "records/op")
	b.ReportMetric(float64(cpu/ops)/1e6, "server-cpu-ms/op")
	return result{wall: b.Elapsed() / ops, cpu: cpu / ops}, t
}
