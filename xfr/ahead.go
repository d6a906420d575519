package xfr

import (
	"context"
	"errors"
	"net/netip"

	"github.com/cnsd/cnsd/store"
)

// Raiser is a Source that can move a zone's serial past one a secondary
// serves: store.Store.RaiseSerial, which only the process holding the
// writer lease may do (others return store.ErrFollowing). The server
// calls it when a secondary is ahead of the zone; a Source without it
// only reports.
type Raiser interface {
	RaiseSerial(ctx context.Context, zone string, above store.Serial) (serial store.Serial, reached bool, err error)
}

var _ Raiser = (*store.Store)(nil)

// aheadConfirmations is how many observations in a row of a secondary
// ahead of the zone open an incident: one can be a race with a commit
// this process has not seen yet (another process writes), two a poll
// interval apart are not.
const aheadConfirmations = 2

// aheadState is what is known of a secondary serving a serial ahead of
// the zone's: an incident lasts from the observation that confirms it
// to the first one that finds the secondary not ahead.
type aheadState struct {
	serial    uint32 // the serial last seen ahead
	seen      int    // observations in a row
	open      bool   // logged and counted
	incidents uint64
	// refused: this process may not raise (it does not write), said
	// once per incident.
	refused bool
	// partial: a raise of this incident moved by 2^31-1 only; the next
	// waits until every other secondary serves that serial.
	partial bool
}

// isAhead reports whether a secondary serving serial is ahead of a zone
// at cur: neither equal nor behind in RFC 1982 order (a serial exactly
// 2^31 away, which RFC 1982 leaves unordered, counts: the secondary
// takes neither as newer).
func isAhead(serial uint32, cur store.Serial) bool {
	s := store.Serial(serial)
	return s != cur && !s.Less(cur)
}

// observeLocked records that the secondary at addr serves zone at
// serial, and opens, continues or closes an incident of it being ahead.
// It starts a raise when one is due.
func (t *tracker) observeLocked(addr netip.AddrPort, zone string, pz *peerZone, serial uint32) {
	snap := t.s.src.Snapshot(zone)
	if snap == nil {
		return
	}
	cur := snap.Serial()
	a := &pz.ahead
	if !isAhead(serial, cur) {
		if a.open {
			t.s.log.Info("secondary no longer ahead of the zone's serial", "zone", zone, "peer", addr.String(),
				"serial", serial, "zone_serial", uint32(cur))
		}
		*a = aheadState{incidents: a.incidents}
		return
	}
	a.serial = serial
	a.seen++
	if a.seen < aheadConfirmations {
		return
	}
	if !a.open {
		a.open = true
		a.incidents++
		t.s.log.Error("secondary serves a serial ahead of the zone's: it ignores NOTIFY and keeps its records until the serial moves past it",
			"zone", zone, "peer", addr.String(), "serial", serial, "zone_serial", uint32(cur))
	}
	if t.ctx == nil || a.refused || t.raising[zone] || (a.partial && !t.othersServeLocked(addr, zone, cur)) {
		return
	}
	t.raising[zone] = true
	go t.raise(t.ctx, addr, zone, serial)
}

// othersServeLocked reports whether every secondary of zone but the one
// at except that is not stale serves cur.
func (t *tracker) othersServeLocked(except netip.AddrPort, zone string, cur store.Serial) bool {
	for addr, p := range t.peers {
		if pz := p.zones[zone]; addr != except && pz != nil && !pz.stale && store.Serial(pz.confirmed) != cur {
			return false
		}
	}
	return true
}

// raise moves zone's serial past above, a serial the secondary at addr
// serves, when the Source can; the NOTIFY of the new serial follows from
// the store's change as after any commit.
func (t *tracker) raise(ctx context.Context, addr netip.AddrPort, zone string, above uint32) {
	r, ok := t.s.src.(Raiser)
	var serial store.Serial
	reached, err := false, errors.New("the source cannot raise serials")
	if ok {
		serial, reached, err = r.RaiseSerial(ctx, zone, store.Serial(above))
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	delete(t.raising, zone)
	pz := t.zoneLocked(addr, zone)
	if pz == nil {
		return
	}
	switch {
	case errors.Is(err, store.ErrHinted):
		pz.ahead.refused = true // once per incident
		t.s.log.Info("told the writer to raise the serial past a secondary's; this process does not write",
			"zone", zone, "peer", addr.String(), "serial", above)
	case errors.Is(err, store.ErrFollowing) || !ok:
		pz.ahead.refused = true
		t.s.log.Info("not raising the serial past a secondary's: this process does not write; the writer does",
			"zone", zone, "peer", addr.String(), "serial", above)
	case err != nil && ctx.Err() == nil:
		t.s.warnClient("raise|"+zone, "cannot raise the serial past a secondary's; trying again at the next poll",
			"zone", zone, "peer", addr.String(), "serial", above, "err", err)
	case err == nil:
		pz.ahead.partial = !reached
		t.s.log.Warn("serial raised past a secondary's", "zone", zone, "peer", addr.String(),
			"serial", above, "zone_serial", uint32(serial), "two_steps", !reached)
	}
}

// observed records serial, ahead of zone's, that an IXFR request from
// addr says it holds. It counts as one observation of the secondary there
// when one secondary listens at addr (see transferred), and makes its
// worker poll it to confirm.
func (t *tracker) observed(addr netip.Addr, zone string, serial uint32) {
	st, z, peer, ok := t.requester(addr, zone)
	if !ok {
		return
	}
	now := t.s.opts.Clock()
	t.mu.Lock()
	defer t.mu.Unlock()
	if h := t.learnt[addr][zone]; peer {
		t.recordLocked(st, addr, zone, serial, true, now)
	} else if h == nil || !h.learnt(st, now) {
		return // no secondary the tracker follows
	}
	targets := t.portsFor(st, addr, z)
	if len(targets) != 1 {
		return
	}
	pz := t.peerZoneLocked(targets[0], zone)
	pz.stale, pz.learnt = false, !peer
	if pz.want == 0 {
		if snap := t.s.src.Snapshot(zone); snap != nil {
			pz.want, pz.wantSince = uint32(snap.Serial()), now
		}
	}
	pz.confirm(serial, now)
	t.observeLocked(targets[0], zone, pz, serial)
	t.startLocked(targets[0], zone, pz)
}

// startLocked starts the worker of zone on the secondary at addr when it
// has something to do and none runs.
func (t *tracker) startLocked(addr netip.AddrPort, zone string, pz *peerZone) {
	if !pz.running && !pz.stale && pz.due() && t.ctx != nil {
		pz.running = true
		go t.work(t.ctx, addr, zone)
	}
}

// recheckConcurrency bounds the SOA queries RecheckPeers has in flight.
const recheckConcurrency = 8

// RecheckPeers asks every secondary of every zone, once, for the serial
// it serves, and goes on polling the ones not at the zone's serial, as
// after a NOTIFY. A process calls it when it takes the writer lease: a
// secondary that took a commit a failover then lost from the previous
// writer is ahead of a zone that may not change for a long time, and
// only polls find it (then the serial is raised past it, ahead.go); the
// tracker otherwise polls a secondary only after a change of the zone.
func (s *Server) RecheckPeers() {
	t := s.peers
	type peerZoneKey struct {
		addr netip.AddrPort
		zone string
	}
	t.mu.Lock()
	ctx := t.ctx
	var keys []peerZoneKey
	for addr, p := range t.peers {
		for zone, pz := range p.zones {
			if !pz.stale {
				keys = append(keys, peerZoneKey{addr, zone})
			}
		}
	}
	t.mu.Unlock()
	if ctx == nil || len(keys) == 0 {
		return
	}
	go func() {
		sem := make(chan struct{}, recheckConcurrency)
		for _, k := range keys {
			select {
			case <-ctx.Done():
				return
			case sem <- struct{}{}:
			}
			go func() {
				defer func() { <-sem }()
				t.poll(ctx, k.addr, k.zone)
				t.mu.Lock()
				if pz := t.zoneLocked(k.addr, k.zone); pz != nil {
					t.startLocked(k.addr, k.zone, pz)
				}
				t.mu.Unlock()
			}()
		}
	}()
}
