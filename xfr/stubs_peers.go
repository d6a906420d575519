package xfr

import (
	"context"
	"net/netip"

	"github.com/cnsd/cnsd/schema"
)

// Placeholder until notify.go and peers.go land.
type tracker struct{ s *Server }

func newTracker(s *Server) *tracker { return &tracker{s: s} }

func (t *tracker) run(ctx context.Context) error { <-ctx.Done(); return nil }

func (t *tracker) configChanged() {}

// transferred records that addr transferred zone at serial; kind is
// "axfr" or "ixfr".
func (t *tracker) transferred(addr netip.Addr, zone string, serial uint32, kind string) {}

// peerAddrs returns the addresses of access's secondaries: those given as
// addresses, and the last resolution of those given as host names.
func (t *tracker) peerAddrs(access schema.ZoneAccess) []netip.Addr {
	var out []netip.Addr
	for _, p := range access.Peers {
		if a, err := netip.ParseAddr(p); err == nil {
			out = append(out, a)
		}
	}
	return out
}
