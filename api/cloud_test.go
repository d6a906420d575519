package api

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/miekg/dns"

	"github.com/cnsd/cnsd/schema"
	"github.com/cnsd/cnsd/store"
	"github.com/cnsd/cnsd/xfr"
)

const (
	vmUUID  = "00000001-0000-4000-8000-000000000001"
	otherVM = "00000000-0000-4000-8000-000000000002"
)

// fakeCloud answers the Cloud interface from fixed data.
type fakeCloud struct {
	held []HeldDeletion
}

func (f *fakeCloud) VM(uuid string) (VM, bool) {
	if uuid != vmUUID {
		return VM{}, false
	}
	return VM{UUID: uuid, Instance: true, LastVisit: 1700000000000,
		Services: []ServiceListing{{Name: "web", Ports: []int{80}, Listed: false}},
		Reasons:  []Reason{{Code: "inst_en_flag", Detail: "triton.cns.status=down"}, {Code: "hysteresis_holds", Detail: "service web"}},
		Pending:  []PendingRemoval{{Service: "owner/web", VM: uuid, Due: time.Unix(1700000600, 0).UTC()}}}, true
}

func (f *fakeCloud) Suffixes(_ context.Context, owner string, networks []string) ([]string, error) {
	if owner == "unreachable" {
		return nil, errors.New("ufds: connection refused")
	}
	return []string{"svc." + owner + ".example.test", "inst." + owner + ".example.test"}, nil
}

func (f *fakeCloud) PendingRemovals() []PendingRemoval {
	v, _ := f.VM(vmUUID)
	return v.Pending
}

func (f *fakeCloud) HeldDeletions() []HeldDeletion { return f.held }

func (f *fakeCloud) Feed() FeedStatus {
	return FeedStatus{Connected: true, VMs: 1, Listings: 2, Commits: 3, LastChange: time.Now().Add(-time.Minute)}
}

func (f *fakeCloud) ConfirmDeletion(cause string) error {
	for i, h := range f.held {
		if h.Cause == cause {
			f.held = append(f.held[:i], f.held[i+1:]...)
			return nil
		}
	}
	return fmt.Errorf("%w for %q", ErrNothingHeld, cause)
}

// noDNS is a DNS server with no secondaries.
type noDNS struct{}

func (noDNS) Peers() []xfr.PeerStatus              { return nil }
func (noDNS) ForgetPeer(string) bool               { return false }
func (noDNS) AllowedPeers() []string               { return nil }
func (noDNS) QueryCounts() map[string]uint64       { return nil }
func (noDNS) TransferCounts() xfr.TransferCounts   { return xfr.TransferCounts{} }
func (noDNS) RateLimitCounts() xfr.RateLimitCounts { return xfr.RateLimitCounts{} }
func (noDNS) AbortedTransfers() map[string]uint64  { return nil }
func (noDNS) TransportCounts() xfr.TransportCounts { return xfr.TransportCounts{} }

func cloudAPI(t *testing.T, withCloud bool) string {
	t.Helper()
	return cloudAPIWith(t, withCloud, Access{Mode: schema.AuthNone}, nil)
}

// cloudAPIWith is cloudAPI letting requests in as access says, with
// health set when not nil.
func cloudAPIWith(t *testing.T, withCloud bool, access Access, health Health) string {
	t.Helper()
	ctx := context.Background()
	st, err := store.Open(ctx, store.NewMemory(), store.Options{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	txt := `"` + vmUUID + `"`
	if _, err := st.CommitSource(ctx, vmUUID, map[string][]store.Record{"example.test.": {
		store.NewRecord("web1.inst.owner.example.test.", dns.TypeA, "192.0.2.1", vmUUID),
		store.NewRecord("web1.inst.owner.example.test.", dns.TypeTXT, txt, vmUUID),
		store.NewRecord("web.svc.owner.example.test.", dns.TypeTXT, txt, vmUUID),
		store.NewRecord(vmUUID+".cmon.example.test.", dns.TypeCNAME, "cmon.example.test.", vmUUID),
	}}); err != nil {
		t.Fatal(err)
	}
	// Another VM provides the same A record (smaller uuid: the served
	// record names it) and a PTR record alone: it has no names.
	if _, err := st.CommitSource(ctx, otherVM, map[string][]store.Record{"example.test.": {
		store.NewRecord("web1.inst.owner.example.test.", dns.TypeA, "192.0.2.1", otherVM)},
		"2.0.192.in-addr.arpa.": {store.NewRecord("1.2.0.192.in-addr.arpa.", dns.TypePTR, "web1.inst.owner.example.test.", otherVM)},
	}); err != nil {
		t.Fatal(err)
	}
	srv := New(st, noDNS{}, access, nil)
	if health != nil {
		srv.SetHealth(health)
	}
	if withCloud {
		srv.SetTTL(schema.TTLConfig{Record: time.Minute, NS: time.Hour})
		srv.SetCloud(&fakeCloud{held: []HeldDeletion{{Cause: "re-list", VMs: []string{vmUUID},
			Zones: []HeldZone{{Zone: "example.test.", Removed: 30, Records: 40}}}}})
	}
	h := httptest.NewServer(srv)
	t.Cleanup(h.Close)
	return h.URL
}

func send(t *testing.T, method, url, body string) (int, []byte) {
	t.Helper()
	var r io.Reader
	if body != "" {
		r = bytes.NewBufferString(body)
	}
	req, err := http.NewRequest(method, url, r)
	if err != nil {
		t.Fatal(err)
	}
	return do(t, req)
}

func TestCloudRoutes(t *testing.T) {
	writer, follower := cloudAPI(t, true), cloudAPI(t, false)
	names := []string{"web.svc.owner.example.test", "web1.inst.owner.example.test"}
	cases := []struct {
		name, method, url, body string
		status                  int
		check                   func(t *testing.T, body []byte)
	}{
		{name: "vm in the writer", method: "GET", url: writer + "/vm/" + vmUUID, status: 200, check: func(t *testing.T, b []byte) {
			var got VM
			decode(t, b, &got)
			if !reflect.DeepEqual(got.Names, names) || got.LastVisit != 1700000000000 || len(got.Reasons) != 2 ||
				len(got.Pending) != 1 || got.Services[0].Listed {
				t.Fatalf("got %s", b)
			}
		}},
		{name: "vm upper case", method: "GET", url: writer + "/vm/" + strings.ToUpper(vmUUID), status: 200, check: func(t *testing.T, b []byte) {
			var got VM
			decode(t, b, &got)
			if got.UUID != vmUUID || !reflect.DeepEqual(got.Names, names) {
				t.Fatalf("got %s", b)
			}
		}},
		{name: "vm records with the configured TTL", method: "GET", url: writer + "/vm/" + vmUUID, status: 200, check: func(t *testing.T, b []byte) {
			var got VM
			decode(t, b, &got)
			want := []VMZone{{Zone: "example.test", Records: []Record{
				{Name: vmUUID + ".cmon.example.test", Type: "CNAME", Value: "cmon.example.test.", TTL: 60},
				{Name: "web.svc.owner.example.test", Type: "TXT", Value: `"` + vmUUID + `"`, TTL: 60},
				{Name: "web1.inst.owner.example.test", Type: "A", Value: "192.0.2.1", TTL: 60},
				{Name: "web1.inst.owner.example.test", Type: "TXT", Value: `"` + vmUUID + `"`, TTL: 60}}}}
			if !reflect.DeepEqual(got.Zones, want) {
				t.Fatalf("zones %+v, want %+v", got.Zones, want)
			}
		}},
		{name: "vm in a follower: records only", method: "GET", url: follower + "/vm/" + vmUUID, status: 200, check: func(t *testing.T, b []byte) {
			want := `{"uuid":"` + vmUUID + `","names":["web.svc.owner.example.test","web1.inst.owner.example.test"],"instance":false,` +
				`"zones":[{"zone":"example.test","records":[` +
				`{"name":"` + vmUUID + `.cmon.example.test","type":"CNAME","value":"cmon.example.test.","ttl":30},` +
				`{"name":"web.svc.owner.example.test","type":"TXT","value":"\"` + vmUUID + `\"","ttl":30},` +
				`{"name":"web1.inst.owner.example.test","type":"A","value":"192.0.2.1","ttl":30},` +
				`{"name":"web1.inst.owner.example.test","type":"TXT","value":"\"` + vmUUID + `\"","ttl":30}]}]}` + "\n"
			if string(b) != want {
				t.Fatalf("got  %s\nwant %s", b, want)
			}
		}},
		{name: "vm without names", method: "GET", url: follower + "/vm/" + otherVM, status: 200, check: func(t *testing.T, b []byte) {
			var got VM
			decode(t, b, &got)
			if len(got.Names) != 0 || len(got.Zones) != 2 || got.Zones[0].Zone != "2.0.192.in-addr.arpa" ||
				got.Zones[1].Records[0] != (Record{Name: "web1.inst.owner.example.test", Type: "A", Value: "192.0.2.1", TTL: 30}) {
				t.Fatalf("got %s", b)
			}
		}},
		{name: "unknown vm", method: "GET", url: writer + "/vm/00000009-0000-4000-8000-000000000009", status: 404, check: errorCode("ResourceNotFound")},
		{name: "suffixes", method: "POST", url: writer + "/suffixes-for-vm", body: `{"owner_uuid": "o1", "networks": ["n1"]}`, status: 200,
			check: func(t *testing.T, b []byte) {
				var got Suffixes
				decode(t, b, &got)
				if !reflect.DeepEqual(got.Suffixes, []string{"svc.o1.example.test", "inst.o1.example.test"}) {
					t.Fatalf("got %s", b)
				}
			}},
		{name: "suffixes without networks", method: "POST", url: writer + "/suffixes-for-vm", body: `{"owner_uuid": "o1"}`, status: 400, check: errorCode("BadRequest")},
		{name: "suffixes not JSON", method: "POST", url: writer + "/suffixes-for-vm", body: `owner=o1`, status: 400, check: errorCode("BadRequest")},
		{name: "suffixes owner lookup fails", method: "POST", url: writer + "/suffixes-for-vm", body: `{"owner_uuid": "unreachable", "networks": []}`, status: 503},
		{name: "suffixes in a follower", method: "POST", url: follower + "/suffixes-for-vm", body: `{"owner_uuid": "o1", "networks": []}`, status: 503, check: errorCode("ServiceUnavailable")},
		{name: "pending removals", method: "GET", url: writer + "/pending-removals", status: 200, check: func(t *testing.T, b []byte) {
			var got []PendingRemoval
			decode(t, b, &got)
			if len(got) != 1 || got[0].VM != vmUUID {
				t.Fatalf("got %s", b)
			}
		}},
		{name: "pending removals in a follower", method: "GET", url: follower + "/pending-removals", status: 503},
		{name: "held deletions", method: "GET", url: writer + "/held-deletions", status: 200, check: func(t *testing.T, b []byte) {
			var got []HeldDeletion
			decode(t, b, &got)
			if len(got) != 1 || got[0].Cause != "re-list" || got[0].Zones[0].Removed != 30 {
				t.Fatalf("got %s", b)
			}
		}},
		{name: "metrics", method: "GET", url: writer + "/metrics", status: 200, check: func(t *testing.T, b []byte) {
			for _, line := range []string{"cnsd_pending_removals 1", `cnsd_held_deletion_vms{cause="re-list"} 1`,
				"cnsd_feed_changefeed_connected 1", "cnsd_feed_vms 1", "cnsd_feed_listings_total 2", "cnsd_commits_total 3",
				`cnsd_held_deletion_records{cause="re-list",zone="example.test"} 30`} {
				if !strings.Contains(string(b), line+"\n") {
					t.Errorf("no line %q in:\n%s", line, grepCNSD(b))
				}
			}
		}},
		{name: "confirm unknown cause", method: "POST", url: writer + "/held-deletions/compute-nodes/confirm", status: 404, check: errorCode("ResourceNotFound")},
		{name: "confirm", method: "POST", url: writer + "/held-deletions/re-list/confirm", status: 200},
		{name: "confirmed is gone", method: "GET", url: writer + "/held-deletions", status: 200, check: func(t *testing.T, b []byte) {
			if string(bytes.TrimSpace(b)) != "[]" {
				t.Fatalf("got %s, want []", b)
			}
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			status, body := send(t, tc.method, tc.url, tc.body)
			if status != tc.status {
				t.Fatalf("status %d, want %d: %s", status, tc.status, body)
			}
			if tc.check != nil {
				tc.check(t, body)
			}
		})
	}
}
