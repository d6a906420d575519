package api

import (
	"crypto/subtle"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"sync/atomic"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/cnsd/cnsd/schema"
	"github.com/cnsd/cnsd/store"
	"github.com/cnsd/cnsd/xfr"
)

// Zones is where the API reads zones: the store.
type Zones interface {
	Zones() []string
	Snapshot(zone string) *store.Snapshot
}

// DNS is what the DNS server knows of its secondaries and counts.
type DNS interface {
	Peers() []xfr.PeerStatus
	ForgetPeer(addr string) bool
	AllowedPeers() []string
	QueryCounts() map[string]uint64
	TransferCounts() xfr.TransferCounts
}

var _ DNS = (*xfr.Server)(nil)

// Server answers the REST API.
type Server struct {
	zones Zones
	dns   DNS
	token atomic.Pointer[string]
	log   *slog.Logger
	mux   *http.ServeMux
	cloud atomic.Pointer[Cloud]
	ttl   atomic.Pointer[schema.TTLConfig]

	health healthHolder
}

// New returns the API over zones and the DNS server. A non-empty token
// must be presented as "Authorization: Bearer <token>" on every route
// but GET /ping and GET /ready, which probes call.
func New(zones Zones, dns DNS, token string, log *slog.Logger) *Server {
	if log == nil {
		log = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	s := &Server{zones: zones, dns: dns, log: log.With("component", "api"), mux: http.NewServeMux()}
	s.SetToken(token)
	s.SetTTL(defaultTTL)
	reg := prometheus.NewRegistry()
	reg.MustRegister(newCollector(s), collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	s.mux.HandleFunc("GET /ping", s.ping)
	s.mux.HandleFunc("GET /ready", s.getReady)
	s.mux.HandleFunc("GET /zones", s.authorized(s.getZones))
	s.mux.HandleFunc("GET /peers", s.authorized(s.getPeers))
	s.mux.HandleFunc("GET /peer/{addr}", s.authorized(s.getPeer))
	s.mux.HandleFunc("DELETE /peer/{addr}", s.authorized(s.deletePeer))
	s.mux.HandleFunc("GET /allowed-peers", s.authorized(s.getAllowedPeers))
	s.mux.HandleFunc("GET /vm/{uuid}", s.authorized(s.getVM))
	s.mux.HandleFunc("POST /suffixes-for-vm", s.authorized(s.postSuffixes))
	s.mux.HandleFunc("GET /pending-removals", s.authorized(s.getPending))
	s.mux.HandleFunc("GET /held-deletions", s.authorized(s.getHeld))
	s.mux.HandleFunc("POST /held-deletions/{cause}/confirm", s.authorized(s.confirmHeld))
	s.mux.Handle("GET /metrics", s.authorized(promhttp.HandlerFor(reg, promhttp.HandlerOpts{ErrorLog: slogError{s.log}}).ServeHTTP))
	return s
}

// SetToken makes token the one clients must present from the next request
// on ("" lets every request in), as a configuration reload does.
func (s *Server) SetToken(token string) { s.token.Store(&token) }

func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) { s.mux.ServeHTTP(w, r) }

func (s *Server) ping(w http.ResponseWriter, r *http.Request) { w.WriteHeader(http.StatusOK) }

// authorized checks the bearer token before h.
func (s *Server) authorized(h http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if token := *s.token.Load(); token != "" {
			got, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
			if !ok || subtle.ConstantTimeCompare([]byte(got), []byte(token)) != 1 {
				s.fail(w, r, errUnauthorized)
				return
			}
		}
		h(w, r)
	}
}

// Errors the handlers return; fail maps them to status codes.
var (
	errUnauthorized = errors.New("a valid bearer token is required")
	errNotFound     = errors.New("not found")
	errBadRequest   = errors.New("bad request")
	errUnavailable  = errors.New("unavailable")
)

// fail answers with err's status code and an Error body.
func (s *Server) fail(w http.ResponseWriter, r *http.Request, err error) {
	status, code := http.StatusInternalServerError, "InternalError"
	switch {
	case errors.Is(err, errUnauthorized):
		status, code = http.StatusUnauthorized, "Unauthorized"
		w.Header().Set("WWW-Authenticate", `Bearer realm="cnsd"`)
	case errors.Is(err, errNotFound):
		status, code = http.StatusNotFound, "ResourceNotFound"
	case errors.Is(err, errBadRequest):
		status, code = http.StatusBadRequest, "BadRequest"
	case errors.Is(err, errNoCloud), errors.Is(err, errUnavailable):
		status, code = http.StatusServiceUnavailable, "ServiceUnavailable"
	}
	if status >= 500 {
		s.log.Error("request failed", "method", r.Method, "path", r.URL.Path, "err", err)
	}
	s.reply(w, status, Error{Code: code, Message: err.Error()})
}

func (s *Server) reply(w http.ResponseWriter, status int, body any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	if err := json.NewEncoder(w).Encode(body); err != nil {
		s.log.Debug("cannot write an answer", "err", err)
	}
}

// slogError passes promhttp's errors to the log.
type slogError struct{ log *slog.Logger }

func (l slogError) Println(v ...any) { l.log.Error("metrics", "err", fmt.Sprint(v...)) }
