package knotbench

import (
	"fmt"
	"testing"
	"time"
)

// commitsPerOp are the commits one operation of BenchmarkMemorySteady
// makes.
const commitsPerOp = 1000

// BenchmarkMemorySteady measures what a cnsd serving a zone holds once
// it has run for a while: a cnsd child of its own (not the pair's, whose
// zone the other benchmarks count on) loads the zone, then commits
// commitsPerOp serials per operation, each replacing one of 100 records
// (Server.Churn), so that the zone keeps its size; its PSS per record served is read after
// the load and after the commits, beside Knot's for the same zone in the
// same run. Two children are measured in turn: one as cnsd runs (the
// store sets the collector's headroom after its first large build), and
// one with GOGC=100 in its environment, which the store leaves alone:
// Go's default, what cnsd did before.
//
//	go test ./xfr/knotbench -run '^$' -bench MemorySteady -benchtime 30x -v -knotbench.records 1000000
func BenchmarkMemorySteady(b *testing.B) {
	for _, n := range sizes(b) {
		b.Run(fmt.Sprintf("records=%d", n), func(b *testing.B) {
			p := setup(b, n)
			knot, err := p.knot.Memory()
			if err != nil {
				b.Fatal(err)
			}
			knotPerRecord := float64(knot) / float64(n)
			b.Logf("Knot: %.0f B per record", knotPerRecord)
			for _, gogc := range []string{"", "100"} {
				name := "gogc=store"
				if gogc != "" {
					name = "gogc=" + gogc
				}
				b.Run(name, func(b *testing.B) {
					if gogc != "" {
						// The child inherits the environment; this
						// process read its own GOGC long ago.
						b.Setenv("GOGC", gogc)
					}
					benchMemorySteady(b, n, knotPerRecord)
				})
			}
		})
	}
}

func benchMemorySteady(b *testing.B, n int, knotPerRecord float64) {
	c, err := StartCnsd(n)
	if err != nil {
		b.Fatal(err)
	}
	defer c.Stop()
	loaded, err := c.Memory()
	if err != nil {
		b.Fatal(err)
	}
	cpu0 := serverCPU(b, c)
	commits := 0
	b.ResetTimer()
	for b.Loop() {
		if err := c.Churn(commits, commitsPerOp); err != nil {
			b.Fatal(err)
		}
		commits += commitsPerOp
	}
	b.StopTimer()
	cpu := serverCPU(b, c) - cpu0
	busy, err := c.Memory()
	if err != nil {
		b.Fatal(err)
	}
	perRecord := func(pss int64) float64 { return float64(pss) / float64(n+min(commits, churnSources)) }
	b.ReportMetric(float64(loaded)/float64(n), "pss-bytes/record-loaded")
	b.ReportMetric(perRecord(busy), "pss-bytes/record-busy")
	b.ReportMetric(float64(cpu)/float64(commits)/1e3, "server-cpu-us/commit")
	b.Logf("cnsd after %d commits: %.0f B per record (%.0f after the load), %.2f times Knot's; %.1f µs CPU per commit",
		commits, perRecord(busy), float64(loaded)/float64(n), perRecord(busy)/knotPerRecord, float64(cpu)/float64(commits)/1e3)
	if testing.Short() {
		return
	}
	// A server is quiet most of the time: give the store's headroom
	// controller (store/headroom.go) four of its ticks, enough to come
	// down from Go's default to its least after the commits.
	time.Sleep(quietWait)
	quiet, err := c.Memory()
	if err != nil {
		b.Fatal(err)
	}
	b.ReportMetric(perRecord(quiet), "pss-bytes/record")
	b.ReportMetric(perRecord(quiet)/knotPerRecord, "x-knot")
	b.Logf("cnsd %v later: %.0f B per record, %.2f times Knot's", quietWait, perRecord(quiet), perRecord(quiet)/knotPerRecord)
}

// quietWait is how long BenchmarkMemorySteady leaves the child alone
// after its commits before it reads the memory a quiet server holds.
const quietWait = 45 * time.Second
