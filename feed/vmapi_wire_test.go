package feed

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gorilla/websocket"

	"github.com/cnsd/cnsd/mockcloud"
	"github.com/cnsd/cnsd/zonegen"
)

// TestChangefeedRegistrationFrame: the v1 and v2 frames, byte for byte
// what the reference client of a cns service sends.
func TestChangefeedRegistrationFrame(t *testing.T) {
	kind := changefeedKind{Resource: "vm", SubResources: vmSubResources}
	const subs = `{"resource":"vm","subResources":["alias","customer_metadata","destroyed","internal_metadata","nics","owner_uuid","server_uuid","state","tags"]}`
	tests := []struct {
		name string
		r    changefeedRegistration
		want string
	}{
		{"v1", changefeedRegistration{Instance: "i1", Service: "cns", ChangeKind: &kind},
			`{"instance":"i1","service":"cns","changeKind":` + subs + `}`},
		{"v2", changefeedRegistration{Instance: "i1", Service: "cns", Resources: []changefeedKind{kind}},
			`{"instance":"i1","service":"cns","resources":[` + subs + `]}`},
	}
	for _, tc := range tests {
		got, err := json.Marshal(tc.r)
		if err != nil {
			t.Fatal(err)
		}
		if string(got) != tc.want {
			t.Errorf("%s registration\n%s\nwant\n%s", tc.name, got, tc.want)
		}
	}
}

// TestVMAPIRegistersV2WhenV1Refused: a publisher that answers the v1
// Accept-Version with 400 InvalidVersion gets the v2 registration, and
// changes flow; reconnections go straight to v2.
func TestVMAPIRegistersV2WhenV1Refused(t *testing.T) {
	c := mockcloud.New(mockcloud.Generate(mockcloud.GenOptions{VMs: 20, Accounts: 4, Servers: 3, Seed: 7}),
		&mockcloud.Options{ChangefeedV2Only: true})
	var mu sync.Mutex
	var versions []string
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if websocket.IsWebSocketUpgrade(r) {
			mu.Lock()
			versions = append(versions, r.Header.Get("Accept-Version"))
			mu.Unlock()
		}
		c.Handler().ServeHTTP(w, r)
	})
	sink, logs := startVMAPI(t, h, nil)
	vmWaitFor(t, "the first listing", func() bool { return sink.numListings() > 0 })
	vm := c.Fixture().VMs[0].UUID
	vmWaitFor(t, "a change over the v2 changefeed", func() bool {
		// Repeated until it arrives: the first may precede the registration.
		if _, err := c.SetTags(vm, map[string]any{"triton.cns.services": "v2"}); err != nil {
			t.Fatal(err)
		}
		return sink.changedMatch(func(v zonegen.VM) bool { return v.UUID == vm && v.Tags["triton.cns.services"] == "v2" })
	})
	c.DisconnectAll()
	vmWaitFor(t, "the reconnection", func() bool { return sink.numListings() > 1 })
	mu.Lock()
	defer mu.Unlock()
	if len(versions) < 3 || versions[0] != "~1" || versions[1] != "~2" || versions[2] != "~2" {
		t.Errorf("Accept-Version of the upgrades %q, want ~1, then ~2 from then on", versions)
	}
	if !strings.Contains(logs.String(), "registering the v2 way") {
		t.Errorf("no log line about the v2 registration:\n%s", logs.String())
	}
}

// TestVMAPIWireOrder: each connect is a plain GET /changefeeds, then the
// upgrade with Accept-Version ~1, then the listing, page after page with
// a marker.
func TestVMAPIWireOrder(t *testing.T) {
	c := newVMCloud(20)
	var mu sync.Mutex
	var reqs []string
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		desc := r.URL.Path
		if websocket.IsWebSocketUpgrade(r) {
			desc = "upgrade " + desc + " Accept-Version=" + r.Header.Get("Accept-Version")
		} else if q := r.URL.Query(); q.Has("state") {
			desc += " state=" + q.Get("state") + " limit=" + q.Get("limit") + " marker=" + q.Get("marker")
		}
		mu.Lock()
		reqs = append(reqs, desc)
		mu.Unlock()
		c.Handler().ServeHTTP(w, r)
	})
	sink, _ := startVMAPI(t, h, nil)
	vmWaitFor(t, "the first listing", func() bool { return sink.numListings() > 0 })
	mu.Lock()
	defer mu.Unlock()
	want := []string{"/changefeeds", "upgrade /changefeeds Accept-Version=~1", "/vms state=active limit=7 marker="}
	for i, w := range want {
		if i >= len(reqs) || reqs[i] != w {
			t.Fatalf("requests %q, want them to start with %q", reqs, want)
		}
	}
	if len(reqs) < 4 || !strings.HasPrefix(reqs[3], `/vms state=active limit=7 marker={"uuid":`) {
		t.Errorf("requests %q: the second page has no marker", reqs)
	}
}

// TestVMAPIDeadConnection: a connection that goes dead (no frame, no pong)
// is noticed within Silence; the follower reconnects and re-lists.
func TestVMAPIDeadConnection(t *testing.T) {
	c := newVMCloud(20)
	upstream := httptest.NewServer(c.Handler())
	t.Cleanup(upstream.Close)
	var conns atomic.Int32
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !websocket.IsWebSocketUpgrade(r) {
			c.Handler().ServeHTTP(w, r)
			return
		}
		mode := relayPlain
		if conns.Add(1) == 1 {
			mode = relayDead
		}
		relayChangefeed(t, w, r, "ws"+strings.TrimPrefix(upstream.URL, "http")+"/changefeeds", mode)
	})
	sink, logs := startVMAPI(t, h, func(cfg *VMAPIConfig) { cfg.Silence = 200 * time.Millisecond })
	vmWaitFor(t, "a listing after the dead connection", func() bool { return sink.numListings() > 1 })
	if len(logs.Lines("changefeed session ended", "timeout")) == 0 {
		t.Errorf("no log line about the silent connection in:\n%s", logs)
	}
	uuid := activeUUIDs(c)[0]
	if _, err := c.SetAlias(uuid, "alive"); err != nil {
		t.Fatal(err)
	}
	vmWaitFor(t, "Changed on the new connection", func() bool { return len(sink.changedOf(uuid)) > 0 })
}
