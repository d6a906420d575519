package main

import (
	"bytes"
	"context"
	"fmt"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/miekg/dns"

	"github.com/cnsd/cnsd/api"
	"github.com/cnsd/cnsd/schema"
	"github.com/cnsd/cnsd/store"
	"github.com/cnsd/cnsd/xfr"
)

const (
	testVM    = "00000001-0000-4000-8000-000000000001"
	testPeer  = "192.0.2.53"
	testZone  = "example.test"
	testClock = "2026-11-23T12:00:00Z"
)

// fakeDNS is a DNS server with one secondary, behind on example.test.
type fakeDNS struct{ forgotten []string }

func (f *fakeDNS) Peers() []xfr.PeerStatus {
	return []xfr.PeerStatus{{Addr: testPeer + ":53", Version: "BIND 9.18", Zones: []xfr.PeerZone{
		{Zone: testZone + ".", Serial: 10, Want: 11, BehindSince: mustTime(testClock).Add(-90 * time.Second)}}},
		// Knot on BIND's address, another port (a test host).
		{Addr: testPeer + ":5302", Version: "Knot DNS 3.2", Zones: []xfr.PeerZone{
			{Zone: "one.test.", Serial: 12, Want: 11, Ahead: true},
			{Zone: "two.test.", Serial: 11, Want: 11, Learnt: true}}},
		{Addr: "[2001:db8::53]:53", Version: "NSD 4.8", Zones: []xfr.PeerZone{{Zone: "two.test.", Serial: 11, Want: 11}}}}
}
func (f *fakeDNS) ForgetPeer(addr string) bool {
	f.forgotten = append(f.forgotten, addr)
	return addr == testPeer
}
func (f *fakeDNS) AllowedPeers() []string               { return []string{"192.0.2.0/24"} }
func (f *fakeDNS) QueryCounts() map[string]uint64       { return nil }
func (f *fakeDNS) TransferCounts() xfr.TransferCounts   { return xfr.TransferCounts{} }
func (f *fakeDNS) RateLimitCounts() xfr.RateLimitCounts { return xfr.RateLimitCounts{} }
func (f *fakeDNS) AbortedTransfers() map[string]uint64  { return nil }
func (f *fakeDNS) TransportCounts() xfr.TransportCounts { return xfr.TransportCounts{} }

// fakeCloud is a writer's pipeline with one VM held back by the damping
// and one held re-list.
type fakeCloud struct{ confirmed []string }

func (f *fakeCloud) VM(uuid string) (api.VM, bool) {
	if uuid != testVM {
		return api.VM{}, false
	}
	return api.VM{UUID: uuid, Instance: true, LastVisit: mustTime(testClock).UnixMilli(),
		Services: []api.ServiceListing{{Name: "web", Ports: []int{80}, Listed: true}},
		Reasons:  []api.Reason{{Code: "inst_en_flag", Detail: "triton.cns.status=down"}, {Code: "hysteresis_holds", Detail: "service web"}},
		Pending:  f.PendingRemovals()}, true
}
func (f *fakeCloud) Suffixes(context.Context, string, []string) ([]string, error) { return nil, nil }
func (f *fakeCloud) PendingRemovals() []api.PendingRemoval {
	return []api.PendingRemoval{{Service: "owner/web", VM: testVM, Requested: mustTime(testClock), Due: mustTime(testClock).Add(10 * time.Minute)}}
}
func (f *fakeCloud) HeldDeletions() []api.HeldDeletion {
	return []api.HeldDeletion{{Cause: "re-list", Since: mustTime(testClock), VMs: []string{testVM},
		Zones: []api.HeldZone{{Zone: testZone + ".", Removed: 30, Records: 40}}}}
}
func (f *fakeCloud) Feed() api.FeedStatus { return api.FeedStatus{Connected: true} }

func (f *fakeCloud) ConfirmDeletion(cause string) error {
	if cause != "re-list" {
		return fmt.Errorf("%w for %q", api.ErrNothingHeld, cause)
	}
	f.confirmed = append(f.confirmed, cause)
	return nil
}

func mustTime(s string) time.Time {
	t, err := time.Parse(time.RFC3339, s)
	if err != nil {
		panic(err)
	}
	return t
}

// startAPI serves cnsd's real API over a store holding a VM's records,
// the fake DNS server and the fake pipeline.
func startAPI(t *testing.T) (string, *fakeDNS, *fakeCloud) {
	t.Helper()
	ctx := context.Background()
	st, err := store.Open(ctx, store.NewMemory(), store.Options{Clock: func() time.Time { return mustTime(testClock).Add(-5 * time.Minute) }}, nil)
	if err != nil {
		t.Fatal(err)
	}
	txt := `"` + testVM + `"`
	if _, err := st.CommitSource(ctx, testVM, map[string][]store.Record{testZone + ".": {
		store.NewRecord("web1.inst.alice.example.test.", dns.TypeA, "192.0.2.1", testVM),
		store.NewRecord("web1.inst.alice.example.test.", dns.TypeTXT, txt, testVM),
	}}); err != nil {
		t.Fatal(err)
	}
	d, c := &fakeDNS{}, &fakeCloud{}
	srv := api.New(st, d, api.Access{Mode: schema.AuthToken, Token: "s3cret"}, nil)
	srv.SetCloud(c)
	h := httptest.NewServer(srv)
	t.Cleanup(h.Close)
	return h.URL, d, c
}

func TestAPICommands(t *testing.T) {
	url, dnsSrv, cloud := startAPI(t)
	now = func() time.Time { return mustTime(testClock) }
	t.Cleanup(func() { now = time.Now })
	tests := []struct {
		name    string
		args    []string
		wantErr string
		wantOut []string
	}{
		{"status", []string{"status"}, "", []string{"ZONE", "example.test", "2", "5m0s",
			"SECONDARY", testPeer, "BIND 9.18", "behind 1m30s", "HELD: a re-list", "cnsadm confirm re-list", "1 self-removals wait"}},
		{"status json", []string{"-j", "status"}, "", []string{`"zones"`, `"held_deletions"`, `"cause": "re-list"`}},
		{"vm", []string{"vm", testVM}, "", []string{"web1.inst.alice.example.test", "service web (ports [80]): listed yes",
			"hysteresis_holds: service web", "pending removal from owner/web", "due about 2026-11-23T12:10:00Z"}},
		{"vm json", []string{"-j", "vm", testVM}, "", []string{`"names": [`, `"last_visit": `, `"zones": [`,
			`"name": "web1.inst.alice.example.test"`, `"type": "A"`, `"value": "192.0.2.1"`, `"ttl": 30`}},
		{"vm unknown", []string{"vm", "00000009-0000-4000-8000-000000000009"}, "404 ResourceNotFound", nil},
		{"peers", []string{"peers"}, "", []string{testPeer, "example.test", "10", "11"}},
		{"peers shown with their ports", []string{"peers"}, "", []string{testPeer + ":53 ", testPeer + ":5302 ", "[2001:db8::53]:53 "}},
		{"status shows the ports", []string{"status"}, "", []string{testPeer + ":53 ", testPeer + ":5302 ", "[2001:db8::53]:53 "}},
		{"peers json", []string{"-j", "peers"}, "", []string{`"endpoint": "192.0.2.53:5302"`, `"endpoint": "[2001:db8::53]:53"`, `"port": 5302`}},
		{"peers ahead and learnt", []string{"peers"}, "", []string{"one.test", "  ahead", "two.test", "current (learnt)"}},
		{"peers show unknown", []string{"peers", "show", "192.0.2.99"}, "404", nil},
		{"peers forget", []string{"peers", "forget", testPeer}, "", []string{"forgot " + testPeer}},
		{"peers bad subcommand", []string{"peers", "frob"}, `unknown subcommand "frob"`, nil},
		{"confirm", []string{"confirm", "re-list"}, "", []string{"confirmed"}},
		{"confirm nothing held", []string{"confirm", "compute-nodes"}, "404", nil},
		{"bind-config", []string{"bind-config", "-primary", "192.0.2.1"}, "", []string{`zone "example.test" {`, "type secondary;", "primaries { 192.0.2.1; };"}},
		{"bind-config catalog", []string{"bind-config", "-catalog", "-primary", "192.0.2.1"}, "", []string{"catalog-zones", `zone "catalog.cnsd.invalid"`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			args := append([]string{"-api", url, "-token", "s3cret", "-config", "/nonexistent"}, tt.args...)
			err := run(context.Background(), args, &stdout, &stderr)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("cnsadm %q = %v, want an error containing %q", tt.args, err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("cnsadm %q: %v", tt.args, err)
			}
			for _, want := range tt.wantOut {
				if !strings.Contains(stdout.String(), want) {
					t.Errorf("cnsadm %q lacks %q:\n%s", tt.args, want, stdout.String())
				}
			}
		})
	}
	if len(dnsSrv.forgotten) != 1 || len(cloud.confirmed) != 1 {
		t.Errorf("forgotten %v, confirmed %v: want one each", dnsSrv.forgotten, cloud.confirmed)
	}
	var stdout bytes.Buffer
	err := run(context.Background(), []string{"-api", url, "status"}, &stdout, &stdout)
	if err == nil || !strings.Contains(err.Error(), "401") {
		t.Errorf("status without the token: %v, want 401", err)
	}
}

// TestVMGolden: cnsadm vm shows the VM's decision and its records per
// zone with their TTL; the output is testdata/vm.golden.
func TestVMGolden(t *testing.T) {
	url, _, _ := startAPI(t)
	var stdout bytes.Buffer
	if err := run(context.Background(), []string{"-api", url, "-token", "s3cret", "vm", testVM}, &stdout, &stdout); err != nil {
		t.Fatal(err)
	}
	golden(t, "vm.golden", stdout.String())
}

// TestStatusAgeUnderChurn: a burst of commits moves the serial ahead of
// the clock (one step per commit); AGE is still the time since the last
// commit, which cnsd reports.
func TestStatusAgeUnderChurn(t *testing.T) {
	ctx := context.Background()
	committed := mustTime(testClock).Add(-5 * time.Minute)
	st, err := store.Open(ctx, store.NewMemory(), store.Options{Clock: func() time.Time { return committed }}, nil)
	if err != nil {
		t.Fatal(err)
	}
	for i := range 200 {
		if _, err := st.CommitSource(ctx, testVM, map[string][]store.Record{testZone + ".": {
			store.NewRecord("web1.inst.alice.example.test.", dns.TypeA, fmt.Sprintf("192.0.2.%d", i%250+1), testVM)}}); err != nil {
			t.Fatal(err)
		}
	}
	if ahead := serialTime(uint32(st.Snapshot(testZone + ".").Serial())).Sub(committed); ahead < 30*time.Minute {
		t.Fatalf("the serial is only %v ahead of the clock; the test needs it far ahead", ahead)
	}
	h := httptest.NewServer(api.New(st, &fakeDNS{}, api.Access{Mode: schema.AuthNone}, nil))
	t.Cleanup(h.Close)
	now = func() time.Time { return mustTime(testClock) }
	t.Cleanup(func() { now = time.Now })
	var stdout bytes.Buffer
	if err := run(ctx, []string{"-api", h.URL, "status"}, &stdout, &stdout); err != nil {
		t.Fatalf("status: %v\n%s", err, stdout.String())
	}
	for l := range strings.Lines(stdout.String()) {
		if f := strings.Fields(l); len(f) == 4 && f[0] == testZone {
			if f[3] != "5m0s" {
				t.Errorf("AGE %q, want 5m0s (the last commit's):\n%s", f[3], stdout.String())
			}
			return
		}
	}
	t.Errorf("no row for %s:\n%s", testZone, stdout.String())
}

func TestZoneAge(t *testing.T) {
	now := mustTime(testClock)
	tests := []struct {
		name string
		z    api.Zone
		want string
	}{
		{"commit time", api.Zone{Serial: 1, CommittedAt: "2026-11-23T11:59:00Z"}, "1m0s"},
		{"no commit time: read from the serial, approximate", api.Zone{Serial: serialOf(now.Add(-2 * time.Minute))}, "~2m0s"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := zoneAge(now, tc.z); got != tc.want {
				t.Errorf("zoneAge = %q, want %q", got, tc.want)
			}
		})
	}
}

// serialOf is the serial cnsd makes at t (store.NextSerial of 0).
func serialOf(t time.Time) uint32 { return uint32(store.NextSerial(0, t)) }
