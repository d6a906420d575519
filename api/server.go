package api

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"slices"
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
	RateLimitCounts() xfr.RateLimitCounts
	AbortedTransfers() map[string]uint64
	TransportCounts() xfr.TransportCounts
}

var _ DNS = (*xfr.Server)(nil)

// Server answers the REST API.
type Server struct {
	zones  Zones
	dns    DNS
	access atomic.Pointer[Access]
	log    *slog.Logger
	mux    *http.ServeMux
	cloud  atomic.Pointer[Cloud]
	ttl    atomic.Pointer[schema.TTLConfig]
	// routes are the routes New registered, in order; openapi.json
	// documents exactly these (TestOpenAPIRoutes).
	routes []route

	health healthHolder
}

// MaxBodyBytes is the largest request body the API reads; a larger one
// is answered 413.
const MaxBodyBytes = 1 << 20

// route is one route of the API and the access it needs.
type route struct {
	method, path string
	level        level
	h            http.HandlerFunc
}

// New returns the API over zones and the DNS server, letting requests in
// as access says (SetAccess changes it).
func New(zones Zones, dns DNS, access Access, log *slog.Logger) *Server {
	if log == nil {
		log = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	s := &Server{zones: zones, dns: dns, log: log.With("component", "api"), mux: http.NewServeMux()}
	s.SetAccess(access)
	s.SetTTL(defaultTTL)
	reg := prometheus.NewRegistry()
	reg.MustRegister(newCollector(s), collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	promh := promhttp.HandlerFor(reg, promhttp.HandlerOpts{ErrorLog: slogError{s.log}}).ServeHTTP
	routes := []route{
		{"GET", "/ping", open, s.ping},
		{"GET", "/ready", open, s.getReady},
		{"GET", "/openapi.json", open, getOpenAPI}, // describes the API, reveals nothing of this cnsd
		{"GET", "/zones", read, s.getZones},
		{"GET", "/peers", read, s.getPeers},
		{"GET", "/peer/{addr}", read, s.getPeer},
		{"DELETE", "/peer/{addr}", write, s.deletePeer},
		{"GET", "/allowed-peers", read, s.getAllowedPeers},
		{"GET", "/vm/{uuid}", read, s.getVM},
		{"POST", "/suffixes-for-vm", read, s.postSuffixes}, // a query: changes nothing
		{"GET", "/pending-removals", read, s.getPending},
		{"GET", "/held-deletions", read, s.getHeld},
		{"POST", "/held-deletions/{cause}/confirm", write, s.confirmHeld},
		{"GET", "/metrics", metrics, promh},
	}
	s.routes = routes
	allowed := map[string][]string{}
	for _, rt := range routes {
		s.mux.HandleFunc(rt.method+" "+rt.path, s.authorized(rt.level, rt.h))
		allowed[rt.path] = append(allowed[rt.path], rt.method)
	}
	// Without a method, a pattern catches the methods no route has, so
	// that 405 and 404 answer with an Error body like every other error.
	for path, methods := range allowed {
		s.mux.HandleFunc(path, s.methodNotAllowed(methods))
	}
	s.mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		s.fail(w, r, fmt.Errorf("%w: no route %s", errNotFound, r.URL.Path))
	})
	return s
}

// SetAccess changes who the API lets in from the next request on, as a
// configuration reload does.
func (s *Server) SetAccess(a Access) { s.access.Store(&a) }

// ServeHTTP answers one request: bodies are limited to MaxBodyBytes, a
// request target that is not a path is answered 400, and a handler that
// panics is answered 500.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	defer func() {
		if v := recover(); v != nil {
			if v == http.ErrAbortHandler {
				panic(v)
			}
			s.fail(w, r, fmt.Errorf("panic: %v", v))
		}
	}()
	if r.ContentLength > MaxBodyBytes {
		w.Header().Set("Connection", "close") // do not read the body
		s.fail(w, r, &http.MaxBytesError{Limit: MaxBodyBytes})
		return
	}
	r.Body = http.MaxBytesReader(w, r.Body, MaxBodyBytes)
	if !strings.HasPrefix(r.URL.Path, "/") {
		// "*" (but OPTIONS, which net/http answers) or CONNECT's host:port,
		// which the mux would answer with an empty 400 or a plain-text 404.
		s.fail(w, r, fmt.Errorf("%w: the request target %q is not a path", errBadRequest, r.RequestURI))
		return
	}
	s.mux.ServeHTTP(w, r)
}

// authorized lets requests that the access allows on a route of level lv
// through to h.
func (s *Server) authorized(lv level, h http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if err := s.access.Load().check(lv, r); err != nil {
			s.fail(w, r, err)
			return
		}
		h(w, r)
	}
}

// methodNotAllowed answers a method no route of the path has.
func (s *Server) methodNotAllowed(methods []string) http.HandlerFunc {
	allow := slices.Clone(methods)
	if slices.Contains(allow, http.MethodGet) {
		allow = append(allow, http.MethodHead)
	}
	return func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Allow", strings.Join(allow, ", "))
		s.fail(w, r, fmt.Errorf("%w: %s %s (allowed: %s)", errMethod, r.Method, r.URL.Path, strings.Join(allow, ", ")))
	}
}

// Errors the handlers return; fail maps them to status codes.
var (
	errUnauthorized = errors.New("a valid bearer token is required (Authorization: Bearer <token>; cnsadm reads it through -config)")
	errNotFound     = errors.New("not found")
	errBadRequest   = errors.New("bad request")
	errUnavailable  = errors.New("unavailable")
	errMethod       = errors.New("method not allowed")
)

// fail answers with err's status code and an Error body whose code is
// restify's name for the status, as Triton's APIs answer.
func (s *Server) fail(w http.ResponseWriter, r *http.Request, err error) {
	status, code := http.StatusInternalServerError, "InternalError"
	switch {
	case errors.Is(err, errUnauthorized):
		status, code = http.StatusUnauthorized, "Unauthorized"
		w.Header().Set("WWW-Authenticate", `Bearer realm="cnsd"`)
	case errors.Is(err, errForbidden):
		status, code = http.StatusForbidden, "Forbidden"
	case errors.As(err, new(*http.MaxBytesError)):
		status, code = http.StatusRequestEntityTooLarge, "PayloadTooLarge"
		err = fmt.Errorf("the body exceeds %d bytes", MaxBodyBytes)
	case errors.Is(err, errMethod):
		status, code = http.StatusMethodNotAllowed, "MethodNotAllowed"
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
