package feed

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/cnsd/cnsd/zonegen"
	"github.com/gorilla/websocket"
)

// TestVMAPIMalformedVMFetched: a VM that GET /vms/{uuid} returns malformed
// is logged by uuid and skipped without retries; other changes still flow.
func TestVMAPIMalformedVMFetched(t *testing.T) {
	c := newVMCloud(20)
	active := activeUUIDs(c)
	bad, good := active[0], active[1]
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/vms/"+bad {
			w.Write([]byte(`{"uuid":"` + bad + `","nics":{"net0":{}}}`))
			return
		}
		c.Handler().ServeHTTP(w, r)
	})
	sink, logs := startVMAPI(t, h, nil)
	vmWaitFor(t, "the first listing", func() bool { return sink.numListings() > 0 })
	for _, id := range []string{bad, good} {
		if _, err := c.SetAlias(id, "renamed"); err != nil {
			t.Fatal(err)
		}
	}
	vmWaitFor(t, "Changed of "+good, func() bool { return len(sink.changedOf(good)) > 0 })
	vmWaitFor(t, "the malformed VM skipped", func() bool { return len(logs.Lines("vm change skipped", bad)) > 0 })
	if n := len(logs.Lines("trying again", bad)); n != 0 {
		t.Errorf("a malformed VM was fetched again %d times", n)
	}
	if len(sink.changedOf(bad)) != 0 {
		t.Errorf("Changed of the malformed VM %s", bad)
	}
}

// TestVMAPIMalformedFrames: garbage frames between the items of a real
// changefeed (relayed from mockcloud) are logged and skipped; the items
// still arrive.
func TestVMAPIMalformedFrames(t *testing.T) {
	c := newVMCloud(20)
	upstream := httptest.NewServer(c.Handler())
	t.Cleanup(upstream.Close)
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !websocket.IsWebSocketUpgrade(r) {
			c.Handler().ServeHTTP(w, r)
			return
		}
		relayChangefeed(t, w, r, "ws"+strings.TrimPrefix(upstream.URL, "http")+"/changefeeds", relayGarbage)
	})
	sink, logs := startVMAPI(t, h, nil)
	vmWaitFor(t, "the first listing", func() bool { return sink.numListings() > 0 })
	uuid := activeUUIDs(c)[0]
	if _, err := c.SetAlias(uuid, "through-garbage"); err != nil {
		t.Fatal(err)
	}
	vmWaitFor(t, "Changed after the garbage", func() bool {
		return sink.changedMatch(func(vm zonegen.VM) bool { return vm.UUID == uuid && vm.Alias == "through-garbage" })
	})
	if n := len(logs.Lines("malformed changefeed frame skipped")); n < 2 {
		t.Errorf("%d malformed frames logged, want at least 2:\n%s", n, logs)
	}
	if sink.numListings() != 1 {
		t.Errorf("%d listings: garbage frames must not end the connection", sink.numListings())
	}
}

// relayMode is what relayChangefeed does to the frames after the bootstrap.
type relayMode int

const (
	relayPlain   relayMode = iota
	relayGarbage           // two malformed frames before each frame
	relayDead              // nothing more, and pings unanswered
)

// relayChangefeed passes a changefeed connection through to upstream,
// changing what follows the bootstrap as mode says.
func relayChangefeed(t *testing.T, w http.ResponseWriter, r *http.Request, upstream string, mode relayMode) {
	up, _, err := websocket.DefaultDialer.Dial(upstream, http.Header{"Accept-Version": r.Header.Values("Accept-Version")})
	if err != nil {
		t.Errorf("relay dial: %v", err)
		return
	}
	defer up.Close()
	u := websocket.Upgrader{}
	down, err := u.Upgrade(w, r, nil)
	if err != nil {
		return
	}
	defer down.Close()
	if mode == relayDead {
		down.SetPingHandler(func(string) error { return nil })
	}
	go func() {
		for {
			typ, b, err := down.ReadMessage()
			if err != nil || up.WriteMessage(typ, b) != nil {
				up.Close()
				return
			}
		}
	}()
	for n := 0; ; n++ {
		_, b, err := up.ReadMessage()
		if err != nil {
			return
		}
		if n > 0 && mode == relayDead {
			continue
		}
		if n > 0 && mode == relayGarbage {
			down.WriteMessage(websocket.TextMessage, []byte(`{"changedResourceId":5}`))
			down.WriteMessage(websocket.TextMessage, []byte(`not json`))
		}
		if down.WriteMessage(websocket.TextMessage, b) != nil {
			return
		}
	}
}
