package knotbench

import (
	"errors"
	"fmt"
	"sync/atomic"
	"testing"
	"time"
)

// A result is one server's figures per operation (an AXFR or a query).
type result struct {
	wall time.Duration
	cpu  time.Duration // the server's user+system CPU time
	// memPerRecord is the server's PSS over the records it serves
	// (AXFR only).
	memPerRecord float64
}

// BenchmarkAXFR transfers the whole zone from cnsd, from Knot and from
// NSD (when installed): wall time per AXFR with a miekg/dns client that
// parses every record, the messages and octets on the wire, the server's
// CPU time, and its memory (PSS) per record served, read after the
// transfers.
func BenchmarkAXFR(b *testing.B) {
	for _, n := range sizes(b) {
		b.Run(fmt.Sprintf("records=%d", n), func(b *testing.B) {
			p := setup(b, n)
			servers := p.references(b)
			res := make([]result, len(servers))
			for i, s := range servers {
				b.Run("server="+s.Name, func(b *testing.B) { res[i] = benchAXFR(b, s) })
			}
			logRatios(b, "AXFR", servers, res)
		})
	}
}

func benchAXFR(b *testing.B, s *Server) result {
	cpu0 := serverCPU(b, s)
	var t Transfer
	for b.Loop() {
		var err error
		if t, err = AXFR(s.TCP, nil); err != nil {
			b.Fatalf("%s: %v", s.Name, err)
		}
	}
	cpu := serverCPU(b, s) - cpu0
	mem, err := s.Memory()
	if err != nil {
		b.Fatalf("%s: %v", s.Name, err)
	}
	ops := time.Duration(b.N)
	b.ReportMetric(float64(t.Messages), "msgs/op")
	b.ReportMetric(float64(t.Bytes), "wire-bytes/op")
	b.ReportMetric(float64(t.Records), "records/op")
	b.ReportMetric(float64(cpu/ops)/1e6, "server-cpu-ms/op")
	b.ReportMetric(float64(mem)/float64(t.Records), "pss-bytes/record")
	return result{wall: b.Elapsed() / ops, cpu: cpu / ops, memPerRecord: float64(mem) / float64(t.Records)}
}

// logRatios logs cnsd's figures (the first server) over each reference
// server's, measured in the same run.
func logRatios(b *testing.B, what string, servers []*Server, res []result) {
	c := res[0]
	for i, s := range servers[1:] {
		r := res[i+1]
		if r.wall == 0 || r.cpu == 0 || r.memPerRecord == 0 {
			b.Logf("%s: cnsd %v wall, %v server CPU per op; %s %v, %v: no ratio (too few operations for the 10 ms CPU clock?)",
				what, c.wall, c.cpu, s.Name, r.wall, r.cpu)
			continue
		}
		b.Logf("%s per op: cnsd %v wall, %v server CPU, %.0f B/record; %s %v wall, %v server CPU, %.0f B/record; cnsd/%s: wall %.2f, server CPU %.2f, memory per record %.2f",
			what, c.wall, c.cpu, c.memPerRecord, s.Name, r.wall, r.cpu, r.memPerRecord, s.Name,
			float64(c.wall)/float64(r.wall), float64(c.cpu)/float64(r.cpu), c.memPerRecord/r.memPerRecord)
	}
}

// BenchmarkQuery sends UDP queries (a mix of A, TXT, SRV and NXDOMAIN,
// see Queries) to cnsd and to Knot from several goroutines, one query in
// flight each: ns/op is wall time per query over all of them, so its
// inverse is the rate; server-cpu-ns/op is the server's CPU time per
// query, the figure that does not depend on the client.
func BenchmarkQuery(b *testing.B) {
	for _, n := range sizes(b) {
		b.Run(fmt.Sprintf("records=%d", n), func(b *testing.B) {
			p := setup(b, n)
			qs := Queries(n, 1<<16)
			var res [2]result
			for i, s := range p.servers() {
				b.Run("server="+s.Name, func(b *testing.B) { res[i] = benchQuery(b, s, qs) })
			}
			logRatio(b, "query", res)
		})
	}
}

func benchQuery(b *testing.B, s *Server, qs []Query) result {
	var next, lost, wrong atomic.Int64
	var firstWrong atomic.Value
	b.SetParallelism(4)
	cpu0 := serverCPU(b, s)
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		c, err := NewQuerier(s.UDP)
		if err != nil {
			b.Error(err)
			return
		}
		defer c.Close()
		for pb.Next() {
			err := c.Ask(qs[next.Add(1)%int64(len(qs))], time.Second)
			switch {
			case errors.Is(err, ErrWrongAnswer):
				wrong.Add(1)
				firstWrong.CompareAndSwap(nil, err)
			case err != nil:
				lost.Add(1)
			}
		}
	})
	b.StopTimer()
	cpu := serverCPU(b, s) - cpu0
	if w := wrong.Load(); w > 0 {
		b.Errorf("%s: %d wrong answers, the first: %v", s.Name, w, firstWrong.Load())
	}
	ops := time.Duration(b.N)
	b.ReportMetric(float64(cpu/ops), "server-cpu-ns/op")
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "queries/s")
	b.ReportMetric(float64(lost.Load()), "lost")
	return result{wall: b.Elapsed() / ops, cpu: cpu / ops}
}

func serverCPU(b *testing.B, s *Server) time.Duration {
	b.Helper()
	d, err := s.CPU()
	if err != nil {
		b.Fatalf("%s: %v", s.Name, err)
	}
	return d
}

// logRatio logs cnsd's figures over Knot's, measured in the same run.
func logRatio(b *testing.B, what string, res [2]result) {
	c, k := res[0], res[1]
	if k.wall == 0 || k.cpu == 0 {
		b.Logf("%s: cnsd %v wall, %v server CPU per op; Knot %v, %v: no ratio (too few operations for the 10 ms CPU clock?)",
			what, c.wall, c.cpu, k.wall, k.cpu)
		return
	}
	b.Logf("%s per op: cnsd %v wall, %v server CPU; Knot %v wall, %v server CPU; cnsd/Knot: wall %.2f, server CPU %.2f",
		what, c.wall, c.cpu, k.wall, k.cpu, float64(c.wall)/float64(k.wall), float64(c.cpu)/float64(k.cpu))
}
