package feed

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/cnsd/cnsd/zonegen"
)

// pageRecorder is a VMPageSink that records the calls in order.
type pageRecorder struct {
	vmSinkRecorder
	mu    sync.Mutex
	calls []string // "page <n>", "abandoned", "listing"
	pages [][]zonegen.VM
}

func (r *pageRecorder) ListingPage(n int, vms []zonegen.VM) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.calls = append(r.calls, fmt.Sprint("page ", n))
	r.pages = append(r.pages, vms)
}

func (r *pageRecorder) ListingAbandoned() {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.calls = append(r.calls, "abandoned")
}

func (r *pageRecorder) Listing(l VMListing) {
	r.mu.Lock()
	r.calls = append(r.calls, "listing")
	r.mu.Unlock()
	r.vmSinkRecorder.Listing(l)
}

// TestVMAPIListingPages: a VMPageSink gets every page of a listing, from
// page 0, in order, before the Listing, whose VMs are the pages' VMs.
func TestVMAPIListingPages(t *testing.T) {
	c := newVMCloud(40)
	srv := httptest.NewServer(c.Handler())
	defer srv.Close()
	v := NewVMAPI(vmapiTestConfig(srv.URL), nil)
	r := &pageRecorder{}
	l, err := v.listTo(context.Background(), r)
	if err != nil {
		t.Fatal(err)
	}
	r.Listing(l)
	if len(r.pages) < 3 {
		t.Fatalf("%d pages; the test wants several", len(r.pages))
	}
	want := []string{}
	for i := range r.pages {
		want = append(want, fmt.Sprint("page ", i))
	}
	want = append(want, "listing")
	if !slices.Equal(r.calls, want) {
		t.Errorf("calls %v, want %v", r.calls, want)
	}
	var all []zonegen.VM
	for _, p := range r.pages {
		all = append(all, p...)
	}
	if len(all) != len(l.VMs) {
		t.Fatalf("pages hold %d VMs, the listing %d", len(all), len(l.VMs))
	}
	for i := range all {
		if all[i].UUID != l.VMs[i].UUID || all[i].Alias != l.VMs[i].Alias {
			t.Fatalf("VM %d: page %s, listing %s", i, all[i].UUID, l.VMs[i].UUID)
		}
	}
	if !slices.Equal(activeUUIDs(c), listedUUIDs(l)) {
		t.Errorf("listing %v, want %v", listedUUIDs(l), activeUUIDs(c))
	}
}

// TestVMAPIListingPagesAbandoned: a listing that fails on its third page
// is abandoned after the pages it delivered, and no Listing follows;
// Run lists again from page 0.
func TestVMAPIListingPagesAbandoned(t *testing.T) {
	c := newVMCloud(40)
	var lists atomic.Int64
	h := http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		if req.URL.Path == "/vms" && lists.Add(1) == 3 {
			http.Error(w, "boom", http.StatusInternalServerError)
			return
		}
		c.Handler().ServeHTTP(w, req)
	})
	srv := httptest.NewServer(h)
	defer srv.Close()
	v := NewVMAPI(vmapiTestConfig(srv.URL), nil)
	r := &pageRecorder{}
	if _, err := v.listTo(context.Background(), r); err == nil {
		t.Fatal("the listing did not fail")
	}
	if want := []string{"page 0", "page 1", "abandoned"}; !slices.Equal(r.calls, want) {
		t.Fatalf("calls %v, want %v", r.calls, want)
	}
	l, err := v.listTo(context.Background(), r)
	if err != nil {
		t.Fatal(err)
	}
	r.Listing(l)
	rest := strings.Join(r.calls[3:], ",")
	if !strings.HasPrefix(rest, "page 0,page 1,") || !strings.HasSuffix(rest, ",listing") {
		t.Errorf("the second listing's calls: %s", rest)
	}
}

// TestVMAPIListingPagesRun: Run hands a VMPageSink the pages of its
// listing without calling it concurrently with the other methods.
func TestVMAPIListingPagesRun(t *testing.T) {
	c := newVMCloud(30)
	r := &serialPages{t: t}
	runVMAPI(t, c.Handler(), r, nil)
	vmWaitFor(t, "a listing", func() bool { return r.numListings() > 0 })
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.pages == 0 || r.vms != len(r.lastListing0().VMs) {
		t.Errorf("%d pages of %d VMs before a listing of %d", r.pages, r.vms, len(r.lastListing0().VMs))
	}
}

// serialPages counts pages and fails the test on overlapping calls.
type serialPages struct {
	vmSinkRecorder
	t          *testing.T
	busy       atomic.Bool
	pages, vms int
}

func (s *serialPages) enter() func() {
	if !s.busy.CompareAndSwap(false, true) {
		s.t.Error("sink methods called concurrently")
	}
	return func() { s.busy.Store(false) }
}

func (s *serialPages) ListingPage(n int, vms []zonegen.VM) {
	defer s.enter()()
	s.mu.Lock()
	defer s.mu.Unlock()
	if n == 0 {
		s.pages, s.vms = 0, 0
	}
	s.pages++
	s.vms += len(vms)
}

func (s *serialPages) ListingAbandoned() { defer s.enter()() }
func (s *serialPages) Listing(l VMListing) {
	defer s.enter()()
	s.vmSinkRecorder.Listing(l)
}
func (s *serialPages) Changed(vm zonegen.VM) {
	defer s.enter()()
	s.vmSinkRecorder.Changed(vm)
}
func (s *serialPages) Gone(uuid string) {
	defer s.enter()()
	s.vmSinkRecorder.Gone(uuid)
}

func (s *vmSinkRecorder) lastListing0() VMListing { return s.listings[len(s.listings)-1] }
