package feed

import (
	"context"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/cnsd/cnsd/zonegen"
)

// seqSink records, per VM, the highest "seq" tag it was told of.
type seqSink struct {
	mu     sync.Mutex
	listed bool
	seen   map[string]float64
	update chan struct{}
}

func (s *seqSink) Listing(VMListing) {
	s.mu.Lock()
	s.listed = true
	s.mu.Unlock()
	s.poke()
}

func (s *seqSink) Changed(vm zonegen.VM) {
	if n, ok := vm.Tags["seq"].(float64); ok {
		s.mu.Lock()
		if n > s.seen[vm.UUID] {
			s.seen[vm.UUID] = n
		}
		s.mu.Unlock()
	}
	s.poke()
}

func (s *seqSink) Gone(string) {}

func (s *seqSink) poke() {
	select {
	case s.update <- struct{}{}:
	default:
	}
}

// caughtUp reports whether the sink has seen, for every VM, the last value
// it was given.
func (s *seqSink) caughtUp(want map[string]float64) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.listed {
		return false
	}
	for id, n := range want {
		if s.seen[id] < n {
			return false
		}
	}
	return true
}

// BenchmarkFollowChanges is the changefeed side of a running cnsd: tag
// changes made in the simulated cloud, each published as a changefeed item
// over the websocket, followed by the consumer (GET /vms/:uuid per item,
// coalesced per VM while one is in flight) until it has seen the last
// change of every VM. The changes go round-robin over the cloud's VMs, so
// the figure is the rate of a steady spread of changes, not of one VM
// changed repeatedly.
func BenchmarkFollowChanges(b *testing.B) {
	c := newVMCloud(1000)
	srv := httptest.NewServer(c.Handler())
	defer srv.Close()
	cfg := VMAPIConfig{URL: srv.URL, Instance: "bench-follow", ItemSilence: -1}
	sink := &seqSink{seen: map[string]float64{}, update: make(chan struct{}, 1)}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- NewVMAPI(cfg, nil).Run(ctx, sink) }()
	defer func() {
		cancel()
		<-done
	}()
	waitCaughtUp(b, sink, nil)

	uuids := activeUUIDs(c)
	want := map[string]float64{}
	b.ResetTimer()
	start := time.Now()
	for i := range b.N {
		id := uuids[i%len(uuids)]
		seq := float64(i + 1)
		if _, err := c.SetTags(id, map[string]any{"seq": seq}); err != nil {
			b.Fatal(err)
		}
		want[id] = seq
	}
	waitCaughtUp(b, sink, want)
	b.ReportMetric(float64(b.N)/time.Since(start).Seconds(), "changes/s")
}

func waitCaughtUp(b *testing.B, sink *seqSink, want map[string]float64) {
	b.Helper()
	deadline := time.After(2 * time.Minute)
	for !sink.caughtUp(want) {
		select {
		case <-sink.update:
		case <-time.After(10 * time.Millisecond):
		case <-deadline:
			b.Fatal("the consumer did not catch up within 2 minutes")
		}
	}
}
