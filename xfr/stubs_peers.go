package xfr

import (
	"context"
	"net/netip"
)

// Placeholder until notify.go and peers.go land.
type tracker struct{ s *Server }

func newTracker(s *Server) *tracker { return &tracker{s: s} }

func (t *tracker) run(ctx context.Context) error { <-ctx.Done(); return nil }

func (t *tracker) configChanged() {}

// transferred records that addr transferred zone at serial; kind is
// "axfr" or "ixfr".
func (t *tracker) transferred(addr netip.Addr, zone string, serial uint32, kind string) {}
