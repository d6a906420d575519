package api

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"time"
)

// Limits bound what one client may hold of the API server: a client that
// sends its request slowly, keeps idle connections, or opens many.
type Limits struct {
	// ReadHeaderTimeout bounds reading a request's headers, ReadTimeout
	// the whole request with its body; the connection is closed when
	// either passes.
	ReadHeaderTimeout, ReadTimeout time.Duration
	// WriteTimeout bounds a request from the end of its headers to the
	// end of the answer; it must exceed the slowest route's work.
	WriteTimeout time.Duration
	// IdleTimeout closes a keep-alive connection with no request.
	IdleTimeout time.Duration
	// MaxHeaderBytes bounds a request's headers (431
	// RequestHeaderFieldsTooLarge).
	MaxHeaderBytes int
	// MaxConns bounds the connections served at once; a further one is
	// answered 429 and closed.
	MaxConns int
}

// DefaultLimits are the limits cnsd serves its API with. The slowest
// route, POST /suffixes-for-vm, gives up after 30 s.
var DefaultLimits = Limits{
	ReadHeaderTimeout: 5 * time.Second,
	ReadTimeout:       30 * time.Second,
	WriteTimeout:      45 * time.Second,
	IdleTimeout:       60 * time.Second,
	MaxHeaderBytes:    16 << 10,
	MaxConns:          64,
}

// shutdownTimeout is how long running requests may take to finish once
// Serve's context ends.
const shutdownTimeout = 10 * time.Second

// Serve answers the API on l with the limits lim until ctx ends, then
// lets running requests finish. It closes l. Requests net/http refuses
// before any handler runs (a malformed request line or header, headers
// over lim.MaxHeaderBytes) are answered with an Error body too.
func (s *Server) Serve(ctx context.Context, l net.Listener, lim Limits) error {
	srv := &http.Server{
		Handler:           s,
		ReadHeaderTimeout: lim.ReadHeaderTimeout,
		ReadTimeout:       lim.ReadTimeout,
		WriteTimeout:      lim.WriteTimeout,
		IdleTimeout:       lim.IdleTimeout,
		MaxHeaderBytes:    lim.MaxHeaderBytes,
		ErrorLog:          slog.NewLogLogger(s.log.Handler(), slog.LevelWarn),
	}
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(jsonErrors(limitListener(l, lim.MaxConns), lim.MaxHeaderBytes)) }()
	select {
	case err := <-errc:
		return fmt.Errorf("api on %s: %w", l.Addr(), err)
	case <-ctx.Done():
	}
	shutdown, cancel := context.WithTimeout(context.WithoutCancel(ctx), shutdownTimeout)
	defer cancel()
	if err := srv.Shutdown(shutdown); err != nil && !errors.Is(err, context.DeadlineExceeded) {
		return fmt.Errorf("api on %s: shutdown: %w", l.Addr(), err)
	}
	return nil
}
