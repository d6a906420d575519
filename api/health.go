package api

import (
	"context"
	"net/http"
	"sync/atomic"
	"time"
)

// Health is what GET /ready and the store metrics report about this
// process and its store; cmd/cnsd provides it.
type Health interface {
	// NotReady lists why the process is not ready, each reason a
	// sentence for the operator; none when it is ready.
	NotReady(ctx context.Context) []string
	// Store reports the store for the metrics.
	Store(ctx context.Context) StoreStatus
	// Writer reports, from memory and at once, whether this process
	// holds the writer lease (GET /ping).
	Writer() bool
}

// StoreStatus is the state of the store as this process sees it.
type StoreStatus struct {
	// Up: the store answered just now (always true for the embedded one).
	Up bool
	// Writer: this process holds the writer lease.
	Writer bool
	// WritesRefused: the writer holds the lease but refuses to write
	// because Redis does not persist with an append-only file.
	WritesRefused bool
	// ZonesRestored counts the zones this process, as the writer, found
	// the store had lost commits of and wrote back from what it serves.
	ZonesRestored int64
	// Redis is the persistence of a Redis store when it has been
	// checked; nil otherwise.
	Redis *RedisPersistence
}

// RedisPersistence is what CONFIG GET and INFO replication said about
// Redis's persistence, and how the writer's commits fared with replicas.
type RedisPersistence struct {
	// AOF is 1 with appendonly yes, 0 with no, -1 when Redis refused
	// CONFIG GET.
	AOF         int
	AppendFsync string // always, everysec, no; "" when unknown
	// Replicas is how many replicas the master had connected at the
	// last check; with any, each commit waits for one to acknowledge it.
	Replicas int
	// CommitsHeld counts the commits this process wrote that no replica
	// acknowledged in time: they were held back, not published.
	CommitsHeld int64
}

// Ready is GET /ready's body.
type Ready struct {
	Ready   bool     `json:"ready"`
	Reasons []string `json:"reasons,omitempty"`
}

// Ping is GET /ping's body: what this process is doing, from what it
// holds in memory. It never waits for the store or the cloud, so that a
// probe can call it often; GET /ready is the check that asks the store.
type Ping struct {
	// Status is always "ok": the process answers.
	Status string `json:"status"`
	// Writer: this process holds the writer lease (with the embedded
	// store, always), so it follows the cloud and writes the store; the
	// others serve what it commits.
	Writer bool `json:"writer"`
	// Store is what this process serves.
	Store PingStore `json:"store"`
	// Feed is the writer's cloud feed; absent in other processes.
	Feed *PingFeed `json:"feed,omitempty"`
}

// PingStore counts the zones and records this process serves.
type PingStore struct {
	Zones   int `json:"zones"`
	Records int `json:"records"`
}

// PingFeed is the state of the writer's cloud feed (FeedStatus).
type PingFeed struct {
	Connected  bool `json:"connected"`  // the VMAPI changefeed is established
	VMs        int  `json:"vms"`        // VMs followed
	Unresolved int  `json:"unresolved"` // VMs waiting for a lookup
	Queued     int  `json:"queued"`     // changes received, not applied yet
	// LastChange is when a change was last applied (RFC 3339); absent
	// before the first.
	LastChange string `json:"last_change,omitempty"`
}

// ping answers GET /ping with a Ping.
func (s *Server) ping(w http.ResponseWriter, r *http.Request) {
	out := Ping{Status: "ok"}
	c := s.getCloud()
	if h := s.getHealth(); h != nil {
		out.Writer = h.Writer()
	} else {
		out.Writer = c != nil
	}
	if s.zones != nil {
		for _, name := range s.zones.Zones() {
			if snap := s.zones.Snapshot(name); snap != nil {
				out.Store.Zones++
				out.Store.Records += snap.Len()
			}
		}
	}
	if c != nil {
		f := c.Feed()
		out.Feed = &PingFeed{Connected: f.Connected, VMs: f.VMs, Unresolved: f.Unresolved, Queued: f.Queued,
			LastChange: stamp(f.LastChange)}
	}
	s.reply(w, http.StatusOK, out)
}

// readyTimeout bounds how long GET /ready waits for the store.
const readyTimeout = 2 * time.Second

// healthHolder holds the Health once cmd/cnsd has set it.
type healthHolder struct{ h atomic.Pointer[Health] }

// SetHealth gives the API what GET /ready and the store metrics report.
// Until it is called the process counts as ready and reports no store
// metrics.
func (s *Server) SetHealth(h Health) { s.health.h.Store(&h) }

func (s *Server) getHealth() Health {
	if p := s.health.h.Load(); p != nil {
		return *p
	}
	return nil
}

// getReady answers 200 when the process is ready, else 503 with the
// reasons. DNS is served from the zones last loaded either way.
func (s *Server) getReady(w http.ResponseWriter, r *http.Request) {
	h := s.getHealth()
	if h == nil {
		s.reply(w, http.StatusOK, Ready{Ready: true})
		return
	}
	ctx, cancel := context.WithTimeout(r.Context(), readyTimeout)
	defer cancel()
	if reasons := h.NotReady(ctx); len(reasons) > 0 {
		s.reply(w, http.StatusServiceUnavailable, Ready{Reasons: reasons})
		return
	}
	s.reply(w, http.StatusOK, Ready{Ready: true})
}
