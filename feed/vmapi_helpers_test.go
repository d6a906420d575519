package feed

import (
	"context"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/cnsd/cnsd/logtest"
	"github.com/cnsd/cnsd/mockcloud"
	"github.com/cnsd/cnsd/zonegen"
)

// vmWaitLimit bounds every wait for a condition; conditions are polled, so
// a slow machine only makes the tests slower, never wrong.
const vmWaitLimit = 20 * time.Second

// vmSinkRecorder is a VMSink that remembers everything it was told.
type vmSinkRecorder struct {
	mu       sync.Mutex
	listings []VMListing
	changed  []zonegen.VM
	gone     []string
}

var _ VMSink = (*vmSinkRecorder)(nil)

func (s *vmSinkRecorder) Listing(l VMListing) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.listings = append(s.listings, l)
}

func (s *vmSinkRecorder) Changed(vm zonegen.VM) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.changed = append(s.changed, vm)
}

func (s *vmSinkRecorder) Gone(uuid string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.gone = append(s.gone, uuid)
}

func (s *vmSinkRecorder) numListings() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.listings)
}

func (s *vmSinkRecorder) lastListing() VMListing {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.listings[len(s.listings)-1]
}

// changedMatch reports whether a Changed VM satisfied ok.
func (s *vmSinkRecorder) changedMatch(ok func(zonegen.VM) bool) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.ContainsFunc(s.changed, ok)
}

func (s *vmSinkRecorder) isGone(uuid string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Contains(s.gone, uuid)
}

// vmWaitFor polls cond until it holds, failing the test after vmWaitLimit.
func vmWaitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(vmWaitLimit)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("gave up waiting for %s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// newVMCloud is a generated cloud of n VMs.
func newVMCloud(n int) *mockcloud.Cloud {
	return mockcloud.New(mockcloud.Generate(mockcloud.GenOptions{VMs: n, Accounts: 4, Servers: 3, Seed: 7}), nil)
}

// vmapiTestConfig has intervals short enough for tests and a page size that
// makes the listing span several pages.
func vmapiTestConfig(url string) VMAPIConfig {
	return VMAPIConfig{URL: url, Instance: "0b1c2d3e-cns-test", Limit: 7,
		MinBackoff: 5 * time.Millisecond, MaxBackoff: 50 * time.Millisecond,
		HeartbeatInterval: 20 * time.Millisecond, Silence: 5 * time.Second,
		ListInterval: 50 * time.Millisecond, ItemSilence: -1}
}

// startVMAPI serves h on 127.0.0.1 and runs a follower of it until the
// test ends.
func startVMAPI(t *testing.T, h http.Handler, tune func(*VMAPIConfig)) (*vmSinkRecorder, *logtest.Buffer) {
	t.Helper()
	sink := &vmSinkRecorder{}
	logs := runVMAPI(t, h, sink, tune)
	return sink, logs
}

// runVMAPI serves h on 127.0.0.1 and runs a follower of it into sink until
// the test ends.
func runVMAPI(t *testing.T, h http.Handler, sink VMSink, tune func(*VMAPIConfig)) *logtest.Buffer {
	t.Helper()
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	return runVMAPIAt(t, srv.URL, sink, tune)
}

// runVMAPIAt runs a follower of the VMAPI at url into sink until the test
// ends.
func runVMAPIAt(t *testing.T, url string, sink VMSink, tune func(*VMAPIConfig)) *logtest.Buffer {
	t.Helper()
	cfg := vmapiTestConfig(url)
	if tune != nil {
		tune(&cfg)
	}
	logs := &logtest.Buffer{}
	log := slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- NewVMAPI(cfg, log).Run(ctx, sink) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("Run returned %v, want nil after cancel", err)
		}
	})
	return logs
}

// activeUUIDs are the fixture's VMs that GET /vms?state=active lists.
func activeUUIDs(c *mockcloud.Cloud) []string {
	var out []string
	for _, v := range c.Fixture().VMs {
		if v.State != "destroyed" && v.State != "failed" {
			out = append(out, v.UUID)
		}
	}
	return out
}

func listedUUIDs(l VMListing) []string {
	var out []string
	for _, v := range l.VMs {
		out = append(out, v.UUID)
	}
	slices.Sort(out)
	return out
}

// changedOf returns the Changed VMs of one uuid.
func (s *vmSinkRecorder) changedOf(uuid string) []zonegen.VM {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []zonegen.VM
	for _, vm := range s.changed {
		if vm.UUID == uuid {
			out = append(out, vm)
		}
	}
	return out
}
