package feed

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"

	"github.com/gorilla/websocket"
)

// vmSubResources are the VM fields followed: the nine Triton CNS
// subscribes to (its SAPI template), so that VMAPI sees from cnsd the
// registration it saw from Triton CNS. Naming reads nothing of
// internal_metadata; an item about it costs one GET /vms/:uuid.
var vmSubResources = []string{"alias", "customer_metadata", "destroyed", "internal_metadata",
	"nics", "owner_uuid", "server_uuid", "state", "tags"}

// changefeedKind is one resource and the fields of it followed.
type changefeedKind struct {
	Resource     string   `json:"resource"`
	SubResources []string `json:"subResources"`
}

// changefeedRegistration is the registration frame: v1 names one
// changeKind, v2 a list of resources. cnsd registers the v1 way first,
// since cnsd follows one resource and every publisher so far accepts it,
// and the v2 way once a publisher refuses the v1 Accept-Version.
type changefeedRegistration struct {
	Instance   string           `json:"instance"`
	Service    string           `json:"service"`
	ChangeKind *changefeedKind  `json:"changeKind,omitempty"`
	Resources  []changefeedKind `json:"resources,omitempty"`
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
	if errors.Is(err, errVersionRefused) && !v.v2.Load() {
		v.log.Info("the changefeed publisher refused the v1 registration; registering the v2 way", "err", err)
		v.v2.Store(true)
		ws, err = v.dial(ctx)
	}
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
	version := "~1"
	if v.v2.Load() {
		version = "~2"
	}
	ws, resp, err := d.DialContext(ctx, u, http.Header{"Accept-Version": {version}})
	var refusal *APIError
	if resp != nil && resp.Body != nil {
		if err != nil && resp.StatusCode >= 400 {
			body, _ := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
			refusal = apiError(u, resp.StatusCode, body)
		}
		resp.Body.Close()
	}
	if refusal != nil && (refusal.Code == "InvalidVersion" || resp.StatusCode == http.StatusNotAcceptable) {
		return nil, fmt.Errorf("changefeed dial with Accept-Version %s: %w: %w", version, errVersionRefused, refusal)
	}
	if err != nil {
		return nil, fmt.Errorf("changefeed dial with Accept-Version %s: %w", version, err)
	}
	return ws, nil
}

// errVersionRefused: the publisher does not speak the registration
// version asked for in Accept-Version.
var errVersionRefused = errors.New("registration version refused")

// register sends the registration and waits, at most Silence, for the
// bootstrap frame.
func (v *VMAPI) register(ws *websocket.Conn) error {
	r := changefeedRegistration{Instance: v.cfg.Instance, Service: "cns"}
	kind := changefeedKind{Resource: "vm", SubResources: vmSubResources}
	if v.v2.Load() {
		r.Resources = []changefeedKind{kind}
	} else {
		r.ChangeKind = &kind
	}
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
