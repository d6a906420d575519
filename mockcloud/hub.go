package mockcloud

import (
	"encoding/json"
	"log/slog"
	"slices"
	"strconv"
	"sync"
	"time"
)

// Resource is a changefeed resource entry as the publisher announces it on
// GET /changefeeds and in bootstrap frames.
type Resource struct {
	Resource       string   `json:"resource"`
	SubResources   []string `json:"subResources"`
	BootstrapRoute string   `json:"bootstrapRoute"`
}

// VMResource is VMAPI's changefeed resource: the top-level VM fields whose
// changes it publishes.
var VMResource = Resource{
	Resource: "vm",
	SubResources: []string{"alias", "customer_metadata", "destroyed", "internal_metadata",
		"nics", "owner_uuid", "server_uuid", "state", "tags"},
	BootstrapRoute: "/vms",
}

// ChangeKind names what changed: the resource and the changed top-level
// fields of its object.
type ChangeKind struct {
	Resource     string   `json:"resource"`
	SubResources []string `json:"subResources"`
}

// Item is one changefeed change item. Published is the publication time in
// milliseconds since the epoch, as a decimal string.
type Item struct {
	ChangeKind        ChangeKind `json:"changeKind"`
	ChangedResourceID string     `json:"changedResourceId"`
	ResourceObject    any        `json:"resourceObject,omitempty"`
	Published         string     `json:"published"`
}

// registration is one instance's subscription to one resource.
type registration struct {
	subs []string
	conn *wsConn
}

// hub is the changefeed publisher: who is subscribed to what.
type hub struct {
	log       *slog.Logger
	resources map[string]Resource

	mu    sync.Mutex                          // guards regs and conns
	regs  map[string]map[string]*registration // resource → instance → registration
	conns map[*wsConn]string                  // every open connection → its instance ("" before registration)
}

func newHub(log *slog.Logger) *hub {
	return &hub{
		log:       log,
		resources: map[string]Resource{VMResource.Resource: VMResource},
		regs:      map[string]map[string]*registration{VMResource.Resource: {}},
		conns:     map[*wsConn]string{},
	}
}

// register subscribes conn as instance and queues the bootstrap frame in
// the same critical section, so no item can overtake it. A registration of
// an instance already registered replaces the old connection, which stays
// open and silent: that is the reference publisher's takeover.
func (h *hub) register(conn *wsConn, instance string, subs map[string][]string, bootstrap []byte) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.conns[conn] = instance
	conn.log = conn.log.With("instance", instance)
	for res, s := range subs {
		if old := h.regs[res][instance]; old != nil && old.conn != conn {
			h.log.Info("changefeed instance taken over by a new connection", "instance", instance, "resource", res)
		}
		h.regs[res][instance] = &registration{subs: s, conn: conn}
	}
	conn.send(bootstrap)
}

// add records an open connection so that cutAll reaches it even before it
// registers.
func (h *hub) add(conn *wsConn) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.conns[conn] = ""
}

// detach forgets conn, and its registrations unless a newer connection of
// the same instance took them over.
func (h *hub) detach(conn *wsConn) {
	h.mu.Lock()
	defer h.mu.Unlock()
	instance, ok := h.conns[conn]
	if !ok {
		return
	}
	delete(h.conns, conn)
	for _, byInstance := range h.regs {
		if r := byInstance[instance]; r != nil && r.conn == conn {
			delete(byInstance, instance)
		}
	}
}

// publish sends it to every subscriber once for each of its subResources
// the subscriber asked for: duplicates are part of the protocol.
func (h *hub) publish(kind ChangeKind, id string, obj any, now time.Time) {
	it := Item{ChangeKind: kind, ChangedResourceID: id, ResourceObject: obj,
		Published: strconv.FormatInt(now.UnixMilli(), 10)}
	b, err := json.Marshal(it)
	if err != nil {
		h.log.Error("marshal changefeed item", "vm", id, "err", err)
		return
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	for _, r := range h.regs[kind.Resource] {
		for _, s := range kind.SubResources {
			if slices.Contains(r.subs, s) {
				r.conn.send(b)
			}
		}
	}
}

// cutAll drops every websocket connection without a close frame, as a
// network failure would.
func (h *hub) cutAll() int {
	h.mu.Lock()
	conns := make([]*wsConn, 0, len(h.conns))
	for c := range h.conns {
		conns = append(conns, c)
	}
	h.mu.Unlock()
	for _, c := range conns {
		c.cut()
	}
	return len(conns)
}

// count returns the number of open connections and of registered instances.
func (h *hub) count() (conns, instances int) {
	h.mu.Lock()
	defer h.mu.Unlock()
	for _, byInstance := range h.regs {
		instances += len(byInstance)
	}
	return len(h.conns), instances
}
