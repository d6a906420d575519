package store

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"
	"time"
)

// BenchmarkBurst measures how fast a burst of changes is absorbed on the
// embedded store: 2,000 VMs each change once, added as fast as one
// goroutine can, while the Batcher commits; the time runs until the last
// is committed. Without a window (the default) the first change commits
// alone and the rest ride the following commits; with the former 20 ms
// window they wait for the burst to pause. Reported: changes/s and
// commits per burst, for each.
//
//	go test ./store -run '^$' -bench Burst -benchtime 5x
func BenchmarkBurst(b *testing.B) {
	const vms = 2000
	for _, window := range []time.Duration{0, 20 * time.Millisecond} {
		b.Run(fmt.Sprintf("window=%v", window), func(b *testing.B) {
			bolt := OpenBoltForTest(b, filepath.Join(b.TempDir(), "cnsd.db"), false)
			s, _ := open(b, bolt, Options{})
			bt := NewBatcher(s, window, 200*time.Millisecond, nil)
			ctx, cancel := context.WithCancel(context.Background())
			done := make(chan error, 1)
			go func() { done <- bt.Run(ctx) }()
			b.Cleanup(func() { cancel(); <-done })
			var elapsed time.Duration
			round := 0
			for b.Loop() {
				round++
				before := bt.Commits()
				start := time.Now()
				for i := range vms {
					vm := fmt.Sprintf("vm%05d", i)
					bt.Add(contrib(vm, map[string][]Record{zone: {a(vm+".example.com.", fmt.Sprintf("10.%d.%d.%d", round%250, i>>8, i&255), vm)}}))
				}
				for bt.Pending() > 0 {
					time.Sleep(100 * time.Microsecond)
				}
				elapsed += time.Since(start)
				b.ReportMetric(float64(bt.Commits()-before), "commits/burst")
			}
			b.ReportMetric(float64(vms*b.N)/elapsed.Seconds(), "changes/s")
		})
	}
}
