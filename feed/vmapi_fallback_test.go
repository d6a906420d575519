package feed

import (
	"context"
	"errors"
	"net/http"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gorilla/websocket"
)

// TestVMAPIFallbackRelisting: while GET /changefeeds fails, the follower
// re-lists periodically and says so once; when the changefeed comes back it
// follows it again.
func TestVMAPIFallbackRelisting(t *testing.T) {
	c := newVMCloud(20)
	var feedDown atomic.Bool
	feedDown.Store(true)
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/changefeeds" && feedDown.Load() {
			http.Error(w, `{"code":"ResourceNotFound"}`, http.StatusNotFound)
			return
		}
		c.Handler().ServeHTTP(w, r)
	})
	sink, logs := startVMAPI(t, h, nil)
	vmWaitFor(t, "three periodic listings", func() bool { return sink.numListings() >= 3 })
	if got := sink.lastListing(); !slices.Equal(listedUUIDs(got), activeUUIDs(c)) {
		t.Errorf("periodic listing %v, want %v", listedUUIDs(got), activeUUIDs(c))
	}
	feedDown.Store(false)
	vmWaitFor(t, "the changefeed back", func() bool { return len(logs.Lines("changefeed established again")) > 0 })
	uuid := activeUUIDs(c)[0]
	if _, err := c.SetAlias(uuid, "back"); err != nil {
		t.Fatal(err)
	}
	vmWaitFor(t, "Changed through the changefeed", func() bool { return len(sink.changedOf(uuid)) > 0 })
	if n := len(logs.Lines("level=WARN", "changefeed unavailable")); n != 1 {
		t.Errorf("%d warnings that the changefeed is unavailable, want 1 for the one outage:\n%s", n, logs)
	}
}

// TestVMAPIRefused: a publisher that does not know the vm resource closes
// the feed with 1000 "unknown resource: vm", as the reference does; that
// is logged as an error with the reason, and the VMs are still listed.
func TestVMAPIRefused(t *testing.T) {
	c := newVMCloud(10)
	up := websocket.Upgrader{}
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !websocket.IsWebSocketUpgrade(r) {
			c.Handler().ServeHTTP(w, r)
			return
		}
		ws, err := up.Upgrade(w, r, nil)
		if err != nil {
			return
		}
		defer ws.Close()
		ws.ReadMessage() // the registration
		msg := websocket.FormatCloseMessage(websocket.CloseNormalClosure, "unknown resource: vm")
		ws.WriteControl(websocket.CloseMessage, msg, time.Now().Add(time.Second))
		ws.ReadMessage() // until the client answers the close
	})
	sink, logs := startVMAPI(t, h, nil)
	vmWaitFor(t, "a periodic listing", func() bool { return sink.numListings() > 0 })
	vmWaitFor(t, "the refusal logged", func() bool {
		return len(logs.Lines("level=ERROR", "changefeed refused", "unknown resource: vm")) > 0
	})
}

func TestVMAPIRunConfigErrors(t *testing.T) {
	for name, cfg := range map[string]VMAPIConfig{
		"no url":      {Instance: "i"},
		"no instance": {URL: "http://127.0.0.1:1"},
	} {
		t.Run(name, func(t *testing.T) {
			err := NewVMAPI(cfg, nil).Run(context.Background(), &vmSinkRecorder{})
			if !errors.Is(err, ErrVMAPIConfig) {
				t.Errorf("Run = %v, want ErrVMAPIConfig", err)
			}
		})
	}
}
