package pipeline

import (
	"time"
)

// progress logs how far a long pass over many VMs got, so that an
// operator watching a bootstrap of 100k VMs sees it move.
type progress struct {
	p     *Pipeline
	what  string
	total int
	start time.Time
	next  time.Time
	done  int
}

func newProgress(p *Pipeline, what string, total int) *progress {
	now := time.Now()
	return &progress{p: p, what: what, total: total, start: now, next: now.Add(p.cfg.Progress)}
}

// step notes that done VMs are processed; it reads the wall clock only
// every 256 VMs.
func (g *progress) step(done int) {
	g.done = done
	if g.what == "" || done%256 != 0 {
		return
	}
	now := time.Now()
	if now.Before(g.next) {
		return
	}
	g.next = now.Add(g.p.cfg.Progress)
	elapsed := now.Sub(g.start)
	rate := float64(done) / elapsed.Seconds()
	left := time.Duration(float64(g.total-done) / rate * float64(time.Second))
	g.p.log.Info(g.what+" in progress", "vms", done, "of", g.total,
		"per_second", int(rate), "left", left.Round(time.Second))
}

func (g *progress) end(resolved int) {
	if g.what == "" {
		return
	}
	g.p.log.Info(g.what+" evaluated", "vms", g.done, "resolved", resolved,
		"unresolved", g.done-resolved, "took", time.Since(g.start).Round(time.Millisecond))
}
