package feed

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/cnsd/cnsd/mockcloud"
	"github.com/cnsd/cnsd/zonegen"
)

func newTestCNAPI(tc *testCloud, now func() time.Time, log *bytes.Buffer) *CNAPI {
	o := CNAPIOptions{URL: tc.URL, PollInterval: time.Millisecond, Now: now}
	if log != nil {
		o.Logger = slog.New(slog.NewTextHandler(log, nil))
	}
	return NewCNAPI(o)
}

func uuids(servers []zonegen.Server) string {
	var ids []string
	for _, s := range servers {
		ids = append(ids, s.UUID)
	}
	return strings.Join(ids, ",")
}

func ptr[T any](v T) *T { return &v }

func TestCNAPIListAndLookup(t *testing.T) {
	tc := newTestCloud(t)
	c := newTestCNAPI(tc, func() time.Time { return testNow }, nil)
	changed, ok := c.poll(t.Context())
	if !ok {
		t.Fatal("poll failed")
	}
	if got, want := uuids(changed), cn1+","+cn2; got != want {
		t.Errorf("first poll reported %s, want %s", got, want)
	}
	want := zonegen.Server{UUID: cn1, Hostname: "cn01", Status: "running", Setup: true,
		LastBoot:      time.Date(2026, 2, 1, 8, 0, 0, 0, time.UTC),
		LastHeartbeat: time.Date(2026, 3, 1, 11, 59, 58, 0, time.UTC)}
	if got, ok := c.Server(cn1); !ok || got != want {
		t.Errorf("Server(cn1) = %+v, %v; want %+v", got, ok, want)
	}
	for _, id := range []string{cnUnset, "nope"} {
		if s, ok := c.Server(id); ok {
			t.Errorf("Server(%s) = %+v, want unknown", id, s)
		}
	}
	if n := tc.count("/servers"); n != 1 {
		t.Errorf("%d requests to /servers, want 1", n)
	}
}

func TestCNAPIRunReportsChangedServer(t *testing.T) {
	tc := newTestCloud(t)
	c := newTestCNAPI(tc, func() time.Time { return testNow }, nil)
	ctx, cancel := context.WithCancel(t.Context())
	reports := make(chan []zonegen.Server)
	done := make(chan error)
	go func() { done <- c.Run(ctx, func(s []zonegen.Server) { reports <- s }) }()

	if got := uuids(<-reports); got != cn1+","+cn2 {
		t.Fatalf("first report %s, want both set-up servers", got)
	}
	if _, err := tc.UpdateServer(cn2, mockcloud.ServerPatch{Status: ptr("unknown"),
		LastHeartbeat: ptr("2026-03-01T10:00:00.000Z")}); err != nil {
		t.Fatal(err)
	}
	got := <-reports
	if len(got) != 1 || got[0].UUID != cn2 || got[0].Status != "unknown" ||
		!got[0].LastHeartbeat.Equal(time.Date(2026, 3, 1, 10, 0, 0, 0, time.UTC)) {
		t.Errorf("after UpdateServer: reported %+v, want cn2 unknown with the old heartbeat", got)
	}
	if s, _ := c.Server(cn2); s.Status != "unknown" {
		t.Errorf("Server(cn2).Status = %q after the report", s.Status)
	}
	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Errorf("Run returned %v, want context.Canceled", err)
	}
}

func TestCNAPIChangeRules(t *testing.T) {
	tests := []struct {
		name    string
		patch   mockcloud.ServerPatch
		advance time.Duration
		report  string // uuids of the second poll's report
		known   bool   // cn2 still known after it
	}{
		{name: "nothing changed", known: true},
		{name: "running heartbeat moves", patch: mockcloud.ServerPatch{LastHeartbeat: ptr("2026-03-01T12:00:03.000Z")}, known: true},
		{name: "hostname is not a rule field", patch: mockcloud.ServerPatch{Hostname: ptr("renamed")}, known: true},
		{name: "status", patch: mockcloud.ServerPatch{Status: ptr("unknown")}, report: cn2, known: true},
		{name: "reboot", patch: mockcloud.ServerPatch{LastBoot: ptr("2026-03-01T11:59:00.000Z")}, report: cn2, known: true},
		{name: "heartbeat lost", patch: mockcloud.ServerPatch{LastHeartbeat: ptr("")}, report: cn2, known: true},
		{name: "unset leaves the listing", patch: mockcloud.ServerPatch{Setup: ptr(false)}, report: cn2},
		{name: "boot grace ends", patch: mockcloud.ServerPatch{LastBoot: ptr("2026-03-01T11:59:00.000Z")},
			advance: 5 * time.Minute, report: cn2, known: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tc := newTestCloud(t)
			clk := &clock{t: testNow}
			c := newTestCNAPI(tc, clk.Now, nil)
			if tt.advance != 0 {
				// The server is first seen inside its boot grace.
				tc.UpdateServer(cn2, tt.patch)
			}
			if _, ok := c.poll(t.Context()); !ok {
				t.Fatal("first poll failed")
			}
			if tt.advance == 0 {
				tc.UpdateServer(cn2, tt.patch)
			}
			clk.Add(tt.advance)
			changed, ok := c.poll(t.Context())
			if !ok {
				t.Fatal("second poll failed")
			}
			if got := uuids(changed); got != tt.report {
				t.Errorf("reported %q, want %q", got, tt.report)
			}
			if _, ok := c.Server(cn2); ok != tt.known {
				t.Errorf("Server(cn2) known = %v, want %v", ok, tt.known)
			}
		})
	}
}

func TestCNAPIFailureKeepsLastList(t *testing.T) {
	tc := newTestCloud(t)
	var log bytes.Buffer
	c := newTestCNAPI(tc, func() time.Time { return testNow }, &log)
	if _, ok := c.poll(t.Context()); !ok {
		t.Fatal("first poll failed")
	}
	failures := []struct {
		status int
		body   string
	}{
		{http.StatusInternalServerError, `{"code":"InternalError","message":"injected"}`},
		{http.StatusServiceUnavailable, `<html>no</html>`},
		{http.StatusOK, `{"not":"a list"}`},
	}
	for _, f := range failures {
		tc.failWith(f.status, f.body)
		if changed, ok := c.poll(t.Context()); ok || changed != nil {
			t.Errorf("poll answered %d %s: ok=%v changed=%v", f.status, f.body, ok, changed)
		}
		for _, id := range []string{cn1, cn2} {
			if _, ok := c.Server(id); !ok {
				t.Errorf("answer %d %s: server %s forgotten", f.status, f.body, id)
			}
		}
	}
	tc.pass()
	if n := strings.Count(log.String(), "cannot list servers"); n != 1 {
		t.Errorf("failure logged %d times, want once per outage:\n%s", n, log.String())
	}
	changed, ok := c.poll(t.Context())
	if !ok || len(changed) != 0 {
		t.Errorf("poll after recovery: ok=%v changed=%v, want ok and nothing changed", ok, uuids(changed))
	}
	if n := strings.Count(log.String(), "listing servers again"); n != 1 {
		t.Errorf("recovery logged %d times, want once:\n%s", n, log.String())
	}
}

func TestCNAPIMalformedServerKeepsItsState(t *testing.T) {
	c := NewCNAPI(CNAPIOptions{Now: func() time.Time { return testNow }})
	old := zonegen.Server{UUID: cn1, Status: "running", Setup: true, LastHeartbeat: testNow}
	c.merge([]zonegen.Server{old}, nil)
	changed := c.merge(nil, []badEntry{{ID: cn1, Err: errNoUUID}, {ID: "never-seen", Err: errNoUUID}})
	if len(changed) != 0 {
		t.Errorf("merge of a malformed known server reported %v", uuids(changed))
	}
	if got, ok := c.Server(cn1); !ok || got != old {
		t.Errorf("Server(cn1) = %+v, %v; want its last state", got, ok)
	}
	if _, ok := c.Server("never-seen"); ok {
		t.Error("a malformed server never seen before became known")
	}
}

func TestCNAPIHungRequestTimesOut(t *testing.T) {
	tc := newTestCloud(t)
	c := NewCNAPI(CNAPIOptions{URL: tc.URL, RequestTimeout: time.Millisecond})
	_, release := tc.holdRequests()
	defer release()
	if _, ok := c.poll(t.Context()); ok {
		t.Error("a listing that never answered succeeded")
	}
}

func TestCNAPIMalformedServerLoggedOnce(t *testing.T) {
	var log bytes.Buffer
	c := NewCNAPI(CNAPIOptions{Logger: slog.New(slog.NewTextHandler(&log, nil))})
	bad := []badEntry{{ID: cn1, Err: errNoUUID}}
	for _, b := range [][]badEntry{bad, bad, nil, bad} {
		c.reportBad(b)
	}
	if n := strings.Count(log.String(), "skipping malformed server"); n != 2 {
		t.Errorf("logged %d times, want when it became malformed (twice):\n%s", n, log.String())
	}
}
