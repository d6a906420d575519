package main

import (
	"encoding/json"
	"io"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/cnsd/cnsd/api"
)

// TestAPIRoutesOverCloud asks every REST route of a cnsd running over the
// simulated cloud, the way cnsadm and the shipped clients do.
func TestAPIRoutesOverCloud(t *testing.T) {
	c := startOverCloud(t, `"cloud.example.test": {"networks": ["*"]}`)
	inst := cloudVM + ".inst." + cloudOwner + ".cloud.example.test"
	waitFor(t, "the VM's name", func() bool { return answers(c.dns, inst+".", "192.0.2.11") })
	cases := []struct {
		method, path, body string
		status             int
		check              func(t *testing.T, body []byte)
	}{
		{"GET", "/ping", "", 200, func(t *testing.T, b []byte) {
			var p api.Ping
			decodeJSON(t, b, &p)
			if p.Status != "ok" || !p.Writer || p.Store.Zones < 2 || p.Feed == nil || !p.Feed.Connected || p.Feed.VMs != 1 {
				t.Errorf("ping %s, want the writer with its zones and a connected feed of one VM", b)
			}
		}},
		{"GET", "/zones", "", 200, func(t *testing.T, b []byte) {
			var zones []api.Zone
			decodeJSON(t, b, &zones)
			names := []string{}
			for _, z := range zones {
				names = append(names, z.Name)
			}
			if !slices.Contains(names, "cloud.example.test") || !slices.Contains(names, "2.0.192.in-addr.arpa") {
				t.Errorf("zones %v, want the forward zone and the reverse zone of 192.0.2.11", names)
			}
		}},
		{"GET", "/vm/" + cloudVM, "", 200, func(t *testing.T, b []byte) {
			var vm api.VM
			decodeJSON(t, b, &vm)
			if !slices.Contains(vm.Names, inst) || vm.LastVisit == 0 || !vm.Instance {
				t.Errorf("vm %s", b)
			}
		}},
		{"GET", "/vm/00000009-0000-4000-8000-000000000009", "", 404, nil},
		{"POST", "/suffixes-for-vm", `{"owner_uuid": "` + cloudOwner + `", "networks": ["` + cloudNet + `"]}`, 200, func(t *testing.T, b []byte) {
			var s api.Suffixes
			decodeJSON(t, b, &s)
			want := []string{"svc." + cloudOwner + ".cloud.example.test", "inst." + cloudOwner + ".cloud.example.test"}
			if !slices.Equal(s.Suffixes, want) {
				t.Errorf("suffixes %v, want %v", s.Suffixes, want)
			}
		}},
		{"POST", "/suffixes-for-vm", `{"networks": []}`, 400, nil},
		{"GET", "/pending-removals", "", 200, func(t *testing.T, b []byte) { wantJSON(t, b, "[]") }},
		{"GET", "/held-deletions", "", 200, func(t *testing.T, b []byte) { wantJSON(t, b, "[]") }},
		{"POST", "/held-deletions/re-list/confirm", "", 404, nil},
		{"GET", "/peers", "", 200, func(t *testing.T, b []byte) { wantJSON(t, b, "[]") }},
		{"GET", "/peer/192.0.2.99", "", 404, nil},
		{"DELETE", "/peer/192.0.2.99", "", 404, nil},
		{"GET", "/allowed-peers", "", 200, func(t *testing.T, b []byte) {
			var got []api.AllowedPeer
			decodeJSON(t, b, &got)
			if !slices.Contains(got, api.AllowedPeer{Address: "192.0.2.0", Mask: 24}) {
				t.Errorf("allowed peers %s", b)
			}
		}},
		{"GET", "/metrics", "", 200, func(t *testing.T, b []byte) {
			for _, want := range []string{`cnsd_zone_serial{zone="cloud.example.test"}`, "cnsd_pending_removals 0",
				"cnsd_feed_changefeed_connected 1", "cnsd_feed_vms 1", "cnsd_feed_unresolved_vms 0", "cnsd_feed_listings_total 1"} {
				if !strings.Contains(string(b), want) {
					t.Errorf("no %q in the metrics", want)
				}
			}
		}},
	}
	for _, tc := range cases {
		t.Run(tc.method+" "+tc.path, func(t *testing.T) {
			req, err := http.NewRequest(tc.method, c.api+tc.path, strings.NewReader(tc.body))
			if err != nil {
				t.Fatal(err)
			}
			resp, err := authed.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			body, _ := io.ReadAll(resp.Body)
			if resp.StatusCode != tc.status {
				t.Fatalf("status %d, want %d: %s", resp.StatusCode, tc.status, body)
			}
			if tc.check != nil {
				tc.check(t, body)
			}
		})
	}
}

func decodeJSON(t *testing.T, b []byte, v any) {
	t.Helper()
	if err := json.Unmarshal(b, v); err != nil {
		t.Fatalf("%v: %s", err, b)
	}
}

func wantJSON(t *testing.T, b []byte, want string) {
	t.Helper()
	if got := strings.TrimSpace(string(b)); got != want {
		t.Errorf("got %s, want %s", got, want)
	}
}
