package feed

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/gorilla/websocket"
)

// vmSubResources are the VM fields naming depends on: a change to any
// other field (last_modified, zone_state, …) is not worth a fetch.
var vmSubResources = []string{"alias", "customer_metadata", "destroyed", "nics",
	"owner_uuid", "server_uuid", "state", "tags"}

// changefeedRegistration is the v1 registration frame; v1 because cnsd
// follows one resource, and every publisher version accepts it.
type changefeedRegistration struct {
	Instance   string `json:"instance"`
	Service    string `json:"service"`
	ChangeKind struct {
		Resource     string   `json:"resource"`
		SubResources []string `json:"subResources"`
	} `json:"changeKind"`
}

// errChangefeedRefused: the publisher closed the feed instead of
// bootstrapping it, e.g. "unknown resource: vm" from a VMAPI that does not
// publish VMs.
var errChangefeedRefused = errors.New("changefeed registration refused")

// connect establishes the changefeed as the reference client does: a plain
// GET /changefeeds first (a publisher that answers it with an error has no
// changefeed), then the websocket on a new connection, the registration,
// and the bootstrap frame, which must come first.
func (v *VMAPI) connect(ctx context.Context) (*websocket.Conn, error) {
	if _, err := v.get(ctx, "/changefeeds", nil); err != nil {
		return nil, fmt.Errorf("changefeed probe: %w", err)
	}
	ws, err := v.dial(ctx)
	if err != nil {
		return nil, err
	}
	if err := v.register(ws); err != nil {
		ws.Close()
		return nil, err
	}
	return ws, nil
}

// dial opens the websocket, with the HTTP client's TLS and proxy settings.
func (v *VMAPI) dial(ctx context.Context) (*websocket.Conn, error) {
	d := websocket.Dialer{HandshakeTimeout: vmapiRequestTimeout}
	rt := v.cfg.HTTPClient.Transport
	if rt == nil {
		rt = http.DefaultTransport
	}
	if t, ok := rt.(*http.Transport); ok {
		d.TLSClientConfig = t.TLSClientConfig
		d.Proxy = t.Proxy
	}
	u := "ws" + strings.TrimPrefix(strings.TrimSuffix(v.cfg.URL, "/"), "http") + "/changefeeds"
	h := http.Header{"Accept-Version": {"~1"}}
	ws, resp, err := d.DialContext(ctx, u, h)
	if resp != nil && resp.Body != nil {
		resp.Body.Close()
	}
	if err != nil {
		return nil, fmt.Errorf("changefeed dial: %w", err)
	}
	return ws, nil
}

// register sends the registration and waits, at most Silence, for the
// bootstrap frame.
func (v *VMAPI) register(ws *websocket.Conn) error {
	var r changefeedRegistration
	r.Instance, r.Service = v.cfg.Instance, "cns"
	r.ChangeKind.Resource, r.ChangeKind.SubResources = "vm", vmSubResources
	ws.SetWriteDeadline(time.Now().Add(v.cfg.Silence))
	if err := ws.WriteJSON(r); err != nil {
		return fmt.Errorf("changefeed register: %w", err)
	}
	ws.SetReadDeadline(time.Now().Add(v.cfg.Silence))
	_, b, err := ws.ReadMessage()
	if ce, ok := errors.AsType[*websocket.CloseError](err); ok {
		return fmt.Errorf("%w: close code %d: %s", errChangefeedRefused, ce.Code, ce.Text)
	}
	if err != nil {
		return fmt.Errorf("changefeed bootstrap: %w", err)
	}
	f, err := decodeFrame(b)
	if err != nil {
		return fmt.Errorf("changefeed bootstrap: %w", err)
	}
	if !f.bootstrap {
		return errors.New("changefeed bootstrap: first frame is a change item")
	}
	v.log.Debug("changefeed bootstrapped", "route", f.route)
	return nil
}
