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
)

// TestChangefeedRegistrationFrame: the v1 frame, byte for byte what the
// reference client of a cns service sends.
func TestChangefeedRegistrationFrame(t *testing.T) {
	var r changefeedRegistration
	r.Instance, r.Service = "i1", "cns"
	r.ChangeKind.Resource, r.ChangeKind.SubResources = "vm", vmSubResources
	got, err := json.Marshal(r)
	if err != nil {
		t.Fatal(err)
	}
	want := `{"instance":"i1","service":"cns","changeKind":{"resource":"vm","subResources":` +
		`["alias","customer_metadata","destroyed","nics","owner_uuid","server_uuid","state","tags"]}}`
	if string(got) != want {
		t.Errorf("registration\n%s\nwant\n%s", got, want)
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
	if len(logs.lines("changefeed session ended", "timeout")) == 0 {
		t.Errorf("no log line about the silent connection in:\n%s", logs)
	}
	uuid := activeUUIDs(c)[0]
	if _, err := c.SetAlias(uuid, "alive"); err != nil {
		t.Fatal(err)
	}
	vmWaitFor(t, "Changed on the new connection", func() bool { return len(sink.changedOf(uuid)) > 0 })
}
