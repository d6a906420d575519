package mockcloud

import (
	"bufio"
	"encoding/binary"
	"encoding/json"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/gorilla/websocket"
)

// hangGuard bounds every read so that a broken server fails the test
// instead of hanging it; it is not a timing assertion.
const hangGuard = 10 * time.Second

// marker is a frame tests queue behind everything already queued on every
// connection: receiving it first proves nothing was queued before it.
const marker = `{"marker":true}`

func dial(t *testing.T, srv *httptest.Server, acceptVersion string) *websocket.Conn {
	t.Helper()
	h := http.Header{}
	if acceptVersion != "" {
		h.Set("Accept-Version", acceptVersion)
	}
	ws, resp, err := websocket.DefaultDialer.Dial("ws"+strings.TrimPrefix(srv.URL, "http")+"/changefeeds", h)
	if err != nil {
		t.Fatalf("dial: %v (response %v)", err, resp)
	}
	t.Cleanup(func() { ws.Close() })
	return ws
}

func sendJSON(t *testing.T, ws *websocket.Conn, v any) {
	t.Helper()
	if err := ws.WriteJSON(v); err != nil {
		t.Fatal(err)
	}
}

func readText(t *testing.T, ws *websocket.Conn) string {
	t.Helper()
	ws.SetReadDeadline(time.Now().Add(hangGuard))
	typ, b, err := ws.ReadMessage()
	if err != nil {
		t.Fatalf("read: %v", err)
	}
	if typ != websocket.TextMessage {
		t.Fatalf("frame type %d, want text", typ)
	}
	return string(b)
}

func v1Registration(instance string, subs ...string) map[string]any {
	return map[string]any{"instance": instance, "service": "cns",
		"changeKind": map[string]any{"resource": "vm", "subResources": subs}}
}

// subscribeV1 registers with the v1 frame and consumes the bootstrap.
func subscribeV1(t *testing.T, srv *httptest.Server, instance string, subs ...string) *websocket.Conn {
	t.Helper()
	ws := dial(t, srv, "~1")
	sendJSON(t, ws, v1Registration(instance, subs...))
	if b := readText(t, ws); !strings.Contains(b, `"bootstrapRoute"`) {
		t.Fatalf("first frame is not a bootstrap: %s", b)
	}
	return ws
}

// sendMarker queues marker on every open changefeed connection.
func sendMarker(c *Cloud) {
	c.feed.mu.Lock()
	defer c.feed.mu.Unlock()
	for conn := range c.feed.conns {
		conn.send([]byte(marker))
	}
}

// readItems queues a marker on every connection and reads from each of wss
// the items before it. Every open connection must be in wss, or its unread
// marker ends its next read early.
func readItems(t *testing.T, c *Cloud, wss ...*websocket.Conn) [][]Item {
	t.Helper()
	sendMarker(c)
	var out [][]Item
	for _, ws := range wss {
		out = append(out, readToMarker(t, ws))
	}
	return out
}

func readToMarker(t *testing.T, ws *websocket.Conn) []Item {
	t.Helper()
	var items []Item
	for {
		b := readText(t, ws)
		if b == marker {
			return items
		}
		var it Item
		if err := json.Unmarshal([]byte(b), &it); err != nil {
			t.Fatalf("item %s: %v", b, err)
		}
		items = append(items, it)
	}
}

func TestBootstrapFrames(t *testing.T) {
	_, srv := newTestCloud(t)
	own, _ := json.Marshal(VMResource)
	tests := []struct {
		name          string
		acceptVersion string
		registration  any
		want          string
	}{
		{name: "v1 without Accept-Version", registration: v1Registration("i1", "state"), want: string(own)},
		{name: "v1 with ~1, the server's own entry whatever was asked",
			acceptVersion: "~1", registration: v1Registration("i2", "tags", "bogus"), want: string(own)},
		{name: "v2 with ~2", acceptVersion: "~2",
			registration: map[string]any{"instance": "i3", "service": "cns",
				"resources": []any{map[string]any{"resource": "vm", "subResources": []string{"nics"}}}},
			want: `{"bootstrapRoutes":[` + string(own) + `]}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ws := dial(t, srv, tt.acceptVersion)
			sendJSON(t, ws, tt.registration)
			if got := readText(t, ws); got != tt.want {
				t.Errorf("bootstrap\n got %s\nwant %s", got, tt.want)
			}
		})
	}
}

func TestRegistrationRefused(t *testing.T) {
	_, srv := newTestCloud(t)
	tests := []struct {
		name          string
		acceptVersion string
		frame         string
		reason        string
	}{
		{name: "v1 unknown resource", frame: `{"instance":"i","changeKind":{"resource":"network","subResources":[]}}`,
			reason: "unknown resource: network"},
		{name: "v2 unknown resource", acceptVersion: "~2",
			frame:  `{"instance":"i","resources":[{"resource":"vm","subResources":[]},{"resource":"nic","subResources":[]}]}`,
			reason: "unknown resource: nic"},
		{name: "v1 not JSON", frame: `heartbeat`, reason: "failed to parse v1 registration payload"},
		{name: "v1 frame sent as v2", acceptVersion: "~2", frame: `{"instance":"i","changeKind":{"resource":"vm","subResources":[]}}`,
			reason: `v2 registration should contain a "resources" array`},
		{name: "v1 without instance", frame: `{"changeKind":{"resource":"vm","subResources":[]}}`,
			reason: `v1 registration should contain an "instance" identifier`},
		{name: "v2 without resources", acceptVersion: "~2", frame: `{"instance":"i","resources":[]}`,
			reason: "no resources specified"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ws := dial(t, srv, tt.acceptVersion) // the upgrade itself succeeds (101)
			if err := ws.WriteMessage(websocket.TextMessage, []byte(tt.frame)); err != nil {
				t.Fatal(err)
			}
			ws.SetReadDeadline(time.Now().Add(hangGuard))
			_, _, err := ws.ReadMessage()
			var ce *websocket.CloseError
			if !errors.As(err, &ce) {
				t.Fatalf("read: %v, want a close frame", err)
			}
			if ce.Code != websocket.CloseNormalClosure || ce.Text != tt.reason {
				t.Errorf("close %d %q, want 1000 %q", ce.Code, ce.Text, tt.reason)
			}
		})
	}
}

// TestItemOncePerSubscribedSubResource checks that each mutation publishes
// an item whose subResources are the changed VM fields, delivered once for
// each of them the client subscribed to.
func TestItemOncePerSubscribedSubResource(t *testing.T) {
	c, srv := newTestCloud(t)
	f := c.Fixture()
	var vm VM
	for _, v := range f.VMs {
		if v.State == "running" {
			vm = v
			break
		}
	}
	tests := []struct {
		name     string
		change   func() error
		wantSubs []string // the item's changeKind.subResources
	}{
		{name: "tags", change: func() error { _, err := c.SetTags(vm.UUID, map[string]any{"triton.cns.services": "x:1"}); return err },
			wantSubs: []string{"last_modified", "tags"}},
		{name: "customer_metadata", change: func() error {
			_, err := c.SetCustomerMetadata(vm.UUID, map[string]any{"triton.cns.status": "down"})
			return err
		}, wantSubs: []string{"customer_metadata", "last_modified"}},
		{name: "state", change: func() error { _, err := c.SetState(vm.UUID, "stopped"); return err },
			wantSubs: []string{"last_modified", "state", "zone_state"}},
		{name: "alias", change: func() error { _, err := c.SetAlias(vm.UUID, "renamed"); return err },
			wantSubs: []string{"alias", "last_modified"}},
		{name: "server_uuid", change: func() error { _, err := c.MoveVM(vm.UUID, f.Servers[len(f.Servers)-1].UUID); return err },
			wantSubs: []string{"last_modified", "server_uuid"}},
		{name: "nics", change: func() error { _, err := c.SetNICs(vm.UUID, nil); return err },
			wantSubs: []string{"last_modified", "nics"}},
		{name: "destroyed", change: func() error { _, err := c.DestroyVM(vm.UUID); return err },
			wantSubs: []string{"destroyed", "last_modified", "state", "zone_state"}},
		{name: "create", change: func() error {
			_, err := c.CreateVM(VM{UUID: "5b0b1a2c-0000-4000-8000-000000000001", OwnerUUID: vm.OwnerUUID,
				ServerUUID: vm.ServerUUID, Alias: "new0", Tags: map[string]any{"triton.cns.services": "web:80"}})
			return err
		}, wantSubs: []string{"alias", "brand", "create_timestamp", "customer_metadata", "internal_metadata",
			"last_modified", "nics", "owner_uuid", "server_uuid", "state", "tags", "uuid", "zone_state"}},
	}
	// Two subscribers with different interests see different numbers of copies.
	all := subscribeV1(t, srv, "all", VMResource.SubResources...)
	few := subscribeV1(t, srv, "few", "state", "destroyed")
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if err := tt.change(); err != nil {
				t.Fatal(err)
			}
			got := readItems(t, c, all, few)
			for i, subs := range [][]string{VMResource.SubResources, {"state", "destroyed"}} {
				want := 0
				for _, s := range tt.wantSubs {
					if slices.Contains(subs, s) {
						want++
					}
				}
				items := got[i]
				if len(items) != want {
					t.Fatalf("subscriber to %v got %d copies, want %d", subs, len(items), want)
				}
				for _, it := range items {
					checkItem(t, it, tt.wantSubs)
				}
			}
		})
	}
}

func checkItem(t *testing.T, it Item, wantSubs []string) {
	t.Helper()
	if it.ChangeKind.Resource != "vm" || !slices.Equal(it.ChangeKind.SubResources, wantSubs) {
		t.Errorf("changeKind %+v, want vm %v", it.ChangeKind, wantSubs)
	}
	obj, _ := it.ResourceObject.(map[string]any)
	if it.ChangedResourceID == "" || obj["uuid"] != it.ChangedResourceID {
		t.Errorf("changedResourceId %q, resourceObject uuid %v", it.ChangedResourceID, obj["uuid"])
	}
	if ms, err := strconv.ParseInt(it.Published, 10, 64); err != nil || ms < testNow.UnixMilli() {
		t.Errorf("published %q, want milliseconds since the epoch", it.Published)
	}
}

// TestV2Items: a v2 registration gets items like a v1 one.
func TestV2Items(t *testing.T) {
	c, srv := newTestCloud(t)
	ws := dial(t, srv, "~2")
	sendJSON(t, ws, map[string]any{"instance": "v2", "service": "cns",
		"resources": []any{map[string]any{"resource": "vm", "subResources": []string{"tags", "alias"}}}})
	if b := readText(t, ws); !strings.HasPrefix(b, `{"bootstrapRoutes":`) {
		t.Fatalf("bootstrap %s", b)
	}
	uuid := c.Fixture().VMs[0].UUID
	if _, err := c.SetTags(uuid, map[string]any{"k": "v"}); err != nil {
		t.Fatal(err)
	}
	got := readItems(t, c, ws)
	if len(got[0]) != 1 || got[0][0].ChangedResourceID != uuid {
		t.Errorf("items %+v, want one for %s", got[0], uuid)
	}
}

// TestTakeover: a second connection with the same instance takes the feed
// over; the first stays open and receives nothing more.
func TestTakeover(t *testing.T) {
	c, srv := newTestCloud(t)
	first := subscribeV1(t, srv, "cns0", "tags")
	second := subscribeV1(t, srv, "cns0", "tags")
	other := subscribeV1(t, srv, "cns1", "tags")
	uuid := c.Fixture().VMs[0].UUID
	if _, err := c.SetTags(uuid, map[string]any{"a": "b"}); err != nil {
		t.Fatal(err)
	}
	got := readItems(t, c, first, second, other)
	for i, want := range []int{0, 1, 1} {
		if len(got[i]) != want {
			t.Errorf("connection %d (first, second, other) got %d items, want %d", i, len(got[i]), want)
		}
	}
	// The taken-over connection closing must not unregister its successor.
	first.Close()
	if _, err := c.SetTags(uuid, map[string]any{"c": "d"}); err != nil {
		t.Fatal(err)
	}
	if got := readItems(t, c, second, other); len(got[0]) != 1 {
		t.Errorf("after the old connection closed, the new one got %d items, want 1", len(got[0]))
	}
}

// TestHeartbeatIgnoredAndPingAnswered: the client's heartbeat text frames
// get no answer and do not disturb the feed; pings get pongs.
func TestHeartbeatIgnoredAndPingAnswered(t *testing.T) {
	c, srv := newTestCloud(t)
	ws := subscribeV1(t, srv, "cns0", "alias")
	for range 3 {
		if err := ws.WriteMessage(websocket.TextMessage, []byte("heartbeat")); err != nil {
			t.Fatal(err)
		}
	}
	pong := make(chan string, 1)
	ws.SetPongHandler(func(data string) error { pong <- data; return nil })
	if err := ws.WriteControl(websocket.PingMessage, []byte("p1"), time.Now().Add(hangGuard)); err != nil {
		t.Fatal(err)
	}
	if _, err := c.SetAlias(c.Fixture().VMs[0].UUID, "x"); err != nil {
		t.Fatal(err)
	}
	// Pongs are handled while reading: reading up to the marker sees it.
	if got := readItems(t, c, ws); len(got[0]) != 1 {
		t.Errorf("got %d items, want 1", len(got[0]))
	}
	select {
	case p := <-pong:
		if p != "p1" {
			t.Errorf("pong %q, want p1", p)
		}
	default:
		// The pong may trail the marker; wait for it under the guard.
		done := make(chan error, 1)
		go func() { _, _, err := ws.ReadMessage(); done <- err }()
		ws.SetReadDeadline(time.Now().Add(hangGuard))
		select {
		case p := <-pong:
			if p != "p1" {
				t.Errorf("pong %q, want p1", p)
			}
		case err := <-done:
			t.Fatalf("no pong: %v", err)
		}
	}
}

// TestDisconnectAll cuts every connection; the client sees the connection
// end, and a new connection works.
func TestDisconnectAll(t *testing.T) {
	c, srv := newTestCloud(t)
	a := subscribeV1(t, srv, "a", "tags")
	b := subscribeV1(t, srv, "b", "tags")
	if n := c.DisconnectAll(); n != 2 {
		t.Errorf("DisconnectAll = %d, want 2", n)
	}
	for _, ws := range []*websocket.Conn{a, b} {
		ws.SetReadDeadline(time.Now().Add(hangGuard))
		if _, _, err := ws.ReadMessage(); err == nil || isTimeout(err) {
			t.Errorf("read after cut: %v, want the connection gone", err)
		}
	}
	subscribeV1(t, srv, "a", "tags")
}

// isTimeout tells a hang (the guard expired) from a closed connection.
func isTimeout(err error) bool {
	var ne net.Error
	return errors.As(err, &ne) && ne.Timeout()
}

// TestUpgradeWithoutWebSocketVersion performs the handshake of the old
// reference client by hand: no Sec-WebSocket-Version, no Accept-Version.
// It must get 101, and the bootstrap and then a large item (bigger than
// gorilla's write buffer) each as one final unmasked text frame.
func TestUpgradeWithoutWebSocketVersion(t *testing.T) {
	c, srv := newTestCloud(t)
	conn, err := net.Dial("tcp", srv.Listener.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	conn.SetDeadline(time.Now().Add(hangGuard))
	io.WriteString(conn, "GET /changefeeds HTTP/1.1\r\nHost: x\r\nConnection: upgrade\r\n"+
		"Upgrade: websocket\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n\r\n")
	br := bufio.NewReader(conn)
	resp, err := http.ReadResponse(br, nil)
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != http.StatusSwitchingProtocols {
		t.Fatalf("status %d, want 101", resp.StatusCode)
	}
	if got := resp.Header.Get("Sec-WebSocket-Accept"); got != "s3pPLMBiTxaQ9kYGzzhZRbK+xOo=" {
		t.Errorf("Sec-WebSocket-Accept %q", got)
	}
	writeClientFrame(t, conn, []byte(`{"instance":"old","service":"cns","changeKind":{"resource":"vm","subResources":["tags"]}}`))
	fin, op, payload := readServerFrame(t, br)
	own, _ := json.Marshal(VMResource)
	if !fin || op != 1 || string(payload) != string(own) {
		t.Errorf("frame fin=%v opcode=%d payload %s, want a final text frame with %s", fin, op, payload, own)
	}
	big := map[string]any{"blob": strings.Repeat("x", 100_000)}
	if _, err := c.SetTags(c.Fixture().VMs[0].UUID, big); err != nil {
		t.Fatal(err)
	}
	fin, op, payload = readServerFrame(t, br)
	var it Item
	if err := json.Unmarshal(payload, &it); !fin || op != 1 || err != nil {
		t.Errorf("large item: fin=%v opcode=%d, %d bytes, decode %v; want one final text frame", fin, op, len(payload), err)
	}
}

// writeClientFrame writes one final, masked text frame (RFC 6455 §5.2).
func writeClientFrame(t *testing.T, w io.Writer, payload []byte) {
	t.Helper()
	hdr := []byte{0x81, 0x80 | 126, 0, 0}
	binary.BigEndian.PutUint16(hdr[2:], uint16(len(payload)))
	mask := []byte{1, 2, 3, 4}
	masked := make([]byte, len(payload))
	for i, b := range payload {
		masked[i] = b ^ mask[i%4]
	}
	if _, err := w.Write(slices.Concat(hdr, mask, masked)); err != nil {
		t.Fatal(err)
	}
}

// readServerFrame reads one frame header and payload as they are on the
// wire, so that fragmentation would show.
func readServerFrame(t *testing.T, r io.Reader) (fin bool, opcode byte, payload []byte) {
	t.Helper()
	h := make([]byte, 2)
	if _, err := io.ReadFull(r, h); err != nil {
		t.Fatal(err)
	}
	if h[1]&0x80 != 0 {
		t.Fatal("server frame is masked")
	}
	n := uint64(h[1] & 0x7f)
	switch n {
	case 126:
		b := make([]byte, 2)
		io.ReadFull(r, b)
		n = uint64(binary.BigEndian.Uint16(b))
	case 127:
		b := make([]byte, 8)
		io.ReadFull(r, b)
		n = binary.BigEndian.Uint64(b)
	}
	payload = make([]byte, n)
	if _, err := io.ReadFull(r, payload); err != nil {
		t.Fatal(err)
	}
	return h[0]&0x80 != 0, h[0] & 0x0f, payload
}
