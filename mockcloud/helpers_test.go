package mockcloud

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"
)

// testNow is the fixed clock of the tests, so that every timestamp the
// cloud writes is predictable.
var testNow = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)

// newTestCloud serves a generated cloud of 60 VMs, 6 accounts and 4 servers.
func newTestCloud(t *testing.T) (*Cloud, *httptest.Server) {
	t.Helper()
	return serveFixture(t, Generate(GenOptions{VMs: 60, Accounts: 6, Servers: 4, Seed: 7, Now: testNow}))
}

func serveFixture(t *testing.T, f *Fixture) (*Cloud, *httptest.Server) {
	t.Helper()
	var tick atomic.Int64
	// Each reading of the clock is a millisecond later, so that every
	// change moves last_modified, as it does in a real cloud.
	now := func() time.Time { return testNow.Add(time.Duration(tick.Add(1)) * time.Millisecond) }
	c := New(f, &Options{Now: now})
	srv := httptest.NewServer(c.Handler())
	t.Cleanup(func() {
		c.DisconnectAll()
		srv.Close()
	})
	return c, srv
}

// getJSON GETs url, checks the status and decodes the body into v (unless
// v is nil), returning the response for its headers.
func getJSON(t *testing.T, url string, wantStatus int, v any) *http.Response {
	t.Helper()
	return doJSON(t, http.MethodGet, url, "", wantStatus, v)
}

func doJSON(t *testing.T, method, url, body string, wantStatus int, v any) *http.Response {
	t.Helper()
	req, err := http.NewRequest(method, url, stringsReader(body))
	if err != nil {
		t.Fatal(err)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != wantStatus {
		t.Fatalf("%s %s: status %d, want %d", method, url, resp.StatusCode, wantStatus)
	}
	if ct := resp.Header.Get("Content-Type"); ct != "application/json" {
		t.Errorf("%s %s: Content-Type %q", method, url, ct)
	}
	if v != nil {
		if err := json.NewDecoder(resp.Body).Decode(v); err != nil {
			t.Fatalf("%s %s: decode: %v", method, url, err)
		}
	}
	return resp
}

// activeUUIDs lists the uuids of the fixture's VMs that GET /vms?state=active
// must return.
func activeUUIDs(f *Fixture) map[string]bool {
	out := map[string]bool{}
	for _, v := range f.VMs {
		if v.State != "destroyed" && v.State != "failed" {
			out[v.UUID] = true
		}
	}
	return out
}
