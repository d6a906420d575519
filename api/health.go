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
