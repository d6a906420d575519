package api

import (
	"fmt"
	"net/http"
	"net/netip"
	"sort"
	"strings"
	"time"

	"github.com/cnsd/cnsd/xfr"
)

// getZones lists every zone the store holds with its serial.
func (s *Server) getZones(w http.ResponseWriter, r *http.Request) {
	out := []Zone{}
	for _, name := range s.zones.Zones() {
		snap := s.zones.Snapshot(name)
		if snap == nil {
			continue // dropped meanwhile
		}
		out = append(out, Zone{Name: strings.TrimSuffix(name, "."), Serial: uint32(snap.Serial()), Records: snap.Len(),
			LargestRRset: snap.LargestRRset(), CommittedAt: stamp(snap.Committed())})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	s.reply(w, http.StatusOK, out)
}

func (s *Server) getPeers(w http.ResponseWriter, r *http.Request) {
	out := []Peer{}
	for _, p := range s.dns.Peers() {
		out = append(out, peerOf(p))
	}
	s.reply(w, http.StatusOK, out)
}

// getPeer shows one secondary, found by address with or without port.
func (s *Server) getPeer(w http.ResponseWriter, r *http.Request) {
	want, err := parseAddr(r.PathValue("addr"))
	if err != nil {
		s.fail(w, r, err)
		return
	}
	for _, p := range s.dns.Peers() {
		if matches(p.Addr, want) {
			s.reply(w, http.StatusOK, detailed(p))
			return
		}
	}
	s.fail(w, r, fmt.Errorf("peer %s: %w", r.PathValue("addr"), errNotFound))
}

func (s *Server) deletePeer(w http.ResponseWriter, r *http.Request) {
	addr := r.PathValue("addr")
	if _, err := parseAddr(addr); err != nil {
		s.fail(w, r, err)
		return
	}
	if !s.dns.ForgetPeer(addr) {
		s.fail(w, r, fmt.Errorf("peer %s: %w", addr, errNotFound))
		return
	}
	s.log.Info("peer forgotten", "peer", addr)
	w.WriteHeader(http.StatusOK)
}

func (s *Server) getAllowedPeers(w http.ResponseWriter, r *http.Request) {
	out := []AllowedPeer{}
	for _, a := range s.dns.AllowedPeers() {
		p, err := netip.ParsePrefix(a)
		if err != nil {
			addr, aerr := netip.ParseAddr(a)
			if aerr != nil {
				continue
			}
			p = netip.PrefixFrom(addr, addr.BitLen())
		}
		out = append(out, AllowedPeer{Address: p.Addr().String(), Mask: p.Bits()})
	}
	s.reply(w, http.StatusOK, out)
}

// parseAddr accepts an address or address:port from the path.
func parseAddr(s string) (netip.AddrPort, error) {
	if a, err := netip.ParseAddr(s); err == nil {
		return netip.AddrPortFrom(a.Unmap(), 0), nil
	}
	ap, err := netip.ParseAddrPort(s)
	if err != nil {
		return netip.AddrPort{}, fmt.Errorf("%q is not an IP address or address:port: %w", s, errBadRequest)
	}
	return netip.AddrPortFrom(ap.Addr().Unmap(), ap.Port()), nil
}

// matches reports whether the peer at addr (address:port) is want; a
// want without port matches any port.
func matches(addr string, want netip.AddrPort) bool {
	ap, err := netip.ParseAddrPort(addr)
	if err != nil {
		return false
	}
	return ap.Addr() == want.Addr() && (want.Port() == 0 || ap.Port() == want.Port())
}

// peerOf is a secondary as GET /peers lists it.
func peerOf(p xfr.PeerStatus) Peer {
	ap, _ := netip.ParseAddrPort(p.Addr)
	out := Peer{Address: ap.Addr().String(), Endpoint: ap.String(), Serials: map[string]uint32{}, Version: p.Version,
		Names: p.Names, Zones: []PeerZone{}}
	if ap.Port() != 53 {
		out.Port = ap.Port()
	}
	if out.Version == "" {
		out.Version = "unknown"
	}
	for _, z := range p.Zones {
		name := strings.TrimSuffix(z.Zone, ".")
		if z.Serial != 0 {
			out.Serials[name] = z.Serial
		}
		out.Zones = append(out.Zones, PeerZone{Zone: name, Serial: z.Serial, ConfirmedAt: stamp(z.ConfirmedAt),
			Want: z.Want, BehindSince: stamp(z.BehindSince), Stale: z.Stale, LastNotify: stamp(z.LastNotify),
			AXFR: z.AXFR, IXFR: z.IXFR, NotifySent: z.NotifySent, NotifyFailed: z.NotifyFailed, Ahead: z.Ahead, Learnt: z.Learnt})
	}
	return out
}

// detailed adds what GET /peer/:addr shows in Triton CNS: NOTIFY
// failures, whether NOTIFY and IXFR are in use, and the counters.
func detailed(p xfr.PeerStatus) Peer {
	out := peerOf(p)
	var failed, sent, axfr, ixfr uint64
	for _, z := range p.Zones {
		failed += z.NotifyFailed
		sent += z.NotifySent
		axfr += z.AXFR
		ixfr += z.IXFR
	}
	usingNotify := failed < 5
	usingIXFR := ixfr > axfr*2
	out.NotifyFailures, out.UsingNotify, out.UsingIXFR = &failed, &usingNotify, &usingIXFR
	out.Counters = map[string]any{"axfr": axfr, "ixfr": ixfr, "notify_sent": sent, "notify_failed": failed}
	return out
}

func stamp(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return t.UTC().Format(time.RFC3339)
}
