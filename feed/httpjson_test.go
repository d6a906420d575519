package feed

import (
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cnsd/cnsd/mockcloud"
)

// Fixture identifiers of the tests' cloud.
const (
	cn1     = "44454c4c-3200-1042-804d-c2c04f4a4e31"
	cn2     = "44454c4c-3200-1042-804d-c2c04f4a4e32"
	cnUnset = "44454c4c-3200-1042-804d-c2c04f4a4e33"
	netExt  = "0a8d7d0e-5c67-4d8b-9d7b-1f6f3e4a2b02"
	netFab  = "7c9e2f1a-3b4d-4e5f-8a6b-2c3d4e5f6a03"
	pool1   = "e2a1c3b4-5d6e-4f70-8a9b-0c1d2e3f4a04"
	pool2   = "e2a1c3b4-5d6e-4f70-8a9b-0c1d2e3f4a05"
	alice   = "5450ee30-6b8e-4f4d-9f1c-0f3c1d6c2a11"
	vm1     = "c43ae904-2f2c-4f3c-9a0e-6bfb2f9a1d05"
	mac1    = "90:b8:d0:00:00:01"
)

// testNow is the mock cloud's clock and the tests' "now": heartbeats are
// fresh and boots are old at this instant.
var testNow = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)

func testFixture() *mockcloud.Fixture {
	return &mockcloud.Fixture{
		Users: []mockcloud.User{{UUID: alice, Login: "alice"}},
		Servers: []mockcloud.Server{
			{UUID: cn1, Hostname: "cn01", Status: "running", Setup: true,
				LastBoot: "2026-02-01T08:00:00.000Z", LastHeartbeat: "2026-03-01T11:59:58.000Z",
				Sysinfo: map[string]any{"Admin NIC Tag": "admin"}},
			{UUID: cn2, Hostname: "cn02", Status: "running", Setup: true,
				LastBoot: "2026-02-02T08:00:00.000Z", LastHeartbeat: "2026-03-01T11:59:59.000Z"},
			{UUID: cnUnset, Hostname: "cn03", Status: "running", Setup: false},
		},
		Networks: []mockcloud.Network{
			{UUID: netExt, Name: "external", Family: "ipv4", NICTag: "external", Subnet: "10.88.0.0/16"},
			{UUID: netFab, Name: "My Fabric", Family: "ipv4", Fabric: true, VLANID: 2,
				NICTag: "sdc_overlay", Subnet: "192.168.1.0/24", OwnerUUIDs: []string{alice}},
		},
		NetworkPools: []mockcloud.Pool{
			{UUID: pool1, Name: "public", Family: "ipv4", Networks: []string{netExt}},
			{UUID: pool2, Name: "everything", Family: "ipv4", Networks: []string{netExt, netFab}},
		},
		VMs: []mockcloud.VM{{UUID: vm1, Alias: "web0", OwnerUUID: alice, ServerUUID: cn1,
			State: "running", NICs: []mockcloud.NIC{{Interface: "net0", MAC: mac1,
				NICTag: "external", IP: "10.88.1.2", IPs: []string{"10.88.1.2/16"}, NetworkUUID: netExt}}}},
	}
}

// testCloud is the mock cloud behind a wrapping handler that counts
// requests by path and can answer with an injected status instead.
type testCloud struct {
	*mockcloud.Cloud
	URL  string
	fail atomic.Pointer[injected] // answered instead of the cloud when set
	hold *holder                  // when not nil, requests wait for its release

	mu     sync.Mutex // guards counts
	counts map[string]int
}

func newTestCloud(t testing.TB) *testCloud {
	t.Helper()
	tc := &testCloud{Cloud: mockcloud.New(testFixture(), &mockcloud.Options{Now: func() time.Time { return testNow }}),
		counts: map[string]int{}}
	inner := tc.Handler()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		tc.mu.Lock()
		tc.counts[r.URL.Path]++
		hold := tc.hold
		tc.mu.Unlock()
		if hold != nil {
			hold.arrived <- r.URL.Path
			<-hold.release
		}
		if f := tc.fail.Load(); f != nil {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(f.status)
			w.Write([]byte(f.body))
			return
		}
		inner.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	tc.URL = srv.URL
	return tc
}

// injected is an answer that replaces the cloud's.
type injected struct {
	status int
	body   string
}

// failWith makes every request get status and body until pass is called.
func (tc *testCloud) failWith(status int, body string) {
	tc.fail.Store(&injected{status: status, body: body})
}

func (tc *testCloud) pass() { tc.fail.Store(nil) }

// count is how many requests reached path.
func (tc *testCloud) count(path string) int {
	tc.mu.Lock()
	defer tc.mu.Unlock()
	return tc.counts[path]
}

// holder holds requests: each reports its path on arrived, then waits
// for release to close.
type holder struct {
	arrived chan string
	release chan struct{}
}

// holdRequests makes the following requests wait until release is called;
// each announces itself on the returned channel first.
func (tc *testCloud) holdRequests() (arrived <-chan string, release func()) {
	h := &holder{arrived: make(chan string, 64), release: make(chan struct{})}
	tc.mu.Lock()
	tc.hold = h
	tc.mu.Unlock()
	return h.arrived, func() {
		tc.mu.Lock()
		tc.hold = nil
		tc.mu.Unlock()
		close(h.release)
	}
}

// clock is a settable clock for expiry tests.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *clock) Add(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}
