package xfr

import (
	"net/netip"
	"slices"
	"strings"
	"time"

	"github.com/cnsd/cnsd/store"
)

// PeerStatus is what the server knows of one secondary, for the API.
type PeerStatus struct {
	// Addr is where NOTIFY goes: address and port.
	Addr string `json:"addr"`
	// Names are the configured host names that resolve to Addr.
	Names []string `json:"names,omitempty"`
	// Version is its answer to version.bind CH TXT, if any.
	Version string     `json:"version,omitempty"`
	Zones   []PeerZone `json:"zones"`
}

// PeerZone is one zone on one secondary.
type PeerZone struct {
	Zone string `json:"zone"`
	// Serial is the serial the secondary was last seen serving (0 when
	// never), at ConfirmedAt; Want the serial it should serve.
	Serial      uint32    `json:"serial"`
	ConfirmedAt time.Time `json:"confirmed_at,omitzero"`
	Want        uint32    `json:"want"`
	// BehindSince is when it fell behind Want (zero when current).
	BehindSince time.Time `json:"behind_since,omitzero"`
	// Stale: behind for longer than the server waits; it no longer holds
	// anything back and is not polled until it transfers again. A learnt
	// secondary is never reported stale.
	Stale bool `json:"stale"`
	// Learnt: no configured peer of the zone, a NOTIFY target because it
	// transferred the zone repeatedly (learn_peers). It never holds the
	// journal, and is forgotten after learn_peers.forget_after_seconds
	// without a transfer.
	Learnt       bool      `json:"learnt"`
	LastNotify   time.Time `json:"last_notify,omitzero"`
	AXFR         uint64    `json:"axfr"`
	IXFR         uint64    `json:"ixfr"`
	NotifySent   uint64    `json:"notify_sent"`
	NotifyFailed uint64    `json:"notify_failed"`
	// Ahead: the secondary serves a serial ahead of the zone's (Serial),
	// so it ignores the zone's NOTIFY until the serial moves past it.
	// AheadIncidents counts the times it was found so.
	Ahead          bool   `json:"ahead"`
	AheadIncidents uint64 `json:"ahead_incidents"`
}

// Peers lists every secondary known, configured or seen transferring,
// sorted by address.
func (s *Server) Peers() []PeerStatus {
	t := s.peers
	names := t.namesByAddr()
	t.mu.Lock()
	defer t.mu.Unlock()
	var out []PeerStatus
	for addr, p := range t.peers {
		ps := PeerStatus{Addr: addr.String(), Names: names[addr.Addr()], Version: p.version}
		for zone, pz := range p.zones {
			pzs := PeerZone{Zone: zone, Serial: pz.confirmed, ConfirmedAt: pz.confirmedAt, Want: pz.want,
				Stale: pz.stale && !pz.learnt, Learnt: pz.learnt, LastNotify: pz.lastNotify, AXFR: pz.axfr, IXFR: pz.ixfr,
				NotifySent: pz.notifySent, NotifyFailed: pz.notifyFailed,
				Ahead: pz.ahead.open, AheadIncidents: pz.ahead.incidents}
			if !pz.reached() {
				pzs.BehindSince = pz.wantSince
			}
			ps.Zones = append(ps.Zones, pzs)
		}
		slices.SortFunc(ps.Zones, func(a, b PeerZone) int { return strings.Compare(a.Zone, b.Zone) })
		out = append(out, ps)
	}
	slices.SortFunc(out, func(a, b PeerStatus) int {
		return netip.MustParseAddrPort(a.Addr).Compare(netip.MustParseAddrPort(b.Addr))
	})
	return out
}

func (t *tracker) namesByAddr() map[netip.Addr][]string {
	t.mu.Lock()
	defer t.mu.Unlock()
	out := map[netip.Addr][]string{}
	for host, addrs := range t.resolved {
		for _, a := range addrs {
			out[a] = append(out[a], host)
		}
	}
	for _, n := range out {
		slices.Sort(n)
	}
	return out
}

// ForgetPeer drops what is known of the secondary at addr (an address,
// with or without port), so that it no longer gets NOTIFY unless it is
// configured or transfers again. It reports whether anything was known.
func (s *Server) ForgetPeer(addr string) bool {
	ip, err := netip.ParseAddr(addr)
	if err != nil {
		ap, perr := netip.ParseAddrPort(addr)
		if perr != nil {
			return false
		}
		ip = ap.Addr()
	}
	ip = ip.Unmap()
	t := s.peers
	t.mu.Lock()
	defer t.mu.Unlock()
	found := t.learnt[ip] != nil
	delete(t.learnt, ip)
	for ap := range t.peers {
		if ap.Addr() == ip && (ap.String() == addr || ip.String() == addr) {
			delete(t.peers, ap)
			found = true
		}
	}
	return found
}

// AllowedPeers lists who may transfer some zone besides loopback and TSIG
// key holders: configured secondaries (by their current addresses) and
// allow_transfer prefixes, sorted.
func (s *Server) AllowedPeers() []string {
	st := s.settings()
	seen := map[string]bool{}
	add := func(prefixes []netip.Prefix) {
		for _, p := range prefixes {
			if p.IsSingleIP() {
				seen[p.Addr().String()] = true
			} else {
				seen[p.String()] = true
			}
		}
	}
	add(st.cfg.AllowTransfer)
	for _, access := range st.allAccess() {
		add(access.AllowTransfer)
		for _, a := range s.peers.peerAddrs(access) {
			seen[a.String()] = true
		}
	}
	out := make([]string, 0, len(seen))
	for k := range seen {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

// OldestConfirmed is the oldest serial of zone that a configured
// secondary which is not stale was last seen serving: the journal must
// reach back to it for that secondary to get IXFR. Learnt secondaries do
// not count: they get IXFR while the journal's own bounds allow. ok is
// false when no such secondary is known.
func (s *Server) OldestConfirmed(zone string) (serial uint32, ok bool) {
	t := s.peers
	t.mu.Lock()
	defer t.mu.Unlock()
	for _, p := range t.peers {
		pz := p.zones[zone]
		if pz == nil || pz.stale || pz.learnt || pz.confirmed == 0 {
			continue
		}
		if !ok || store.Serial(pz.confirmed).Less(store.Serial(serial)) {
			serial, ok = pz.confirmed, true
		}
	}
	return serial, ok
}
