package xfr

import (
	"errors"
	"net/netip"
	"strings"
	"time"

	"github.com/miekg/dns"
)

// A secondary may take a zone's NOTIFY and transfer it, yet refuse SOA
// queries for it: Knot does not serve a catalog zone it interprets, and
// answers REFUSED. Polling cannot confirm it there, and a secondary
// never confirmed would be reported behind, sent NOTIFY again and again
// and marked stale while it follows every serial. So it is confirmed by
// what it does instead:
//
//   - a transfer confirms the serial it fetched;
//   - an IXFR request confirms the serial it says it holds;
//   - an SOA query it sends this server (its refresh after a NOTIFY),
//     with no transfer following within refreshQuiet, confirms the
//     serial it was answered: it compared, and found nothing to fetch.
//     This is what tells after a restart of cnsd, when the secondary is
//     current and transfers nothing.
//
// It is still sent NOTIFY of each new serial, and marked stale when it
// does not follow for StaleAfter.

// refreshQuiet is how long after its SOA query a secondary has not
// started a transfer when it found itself current: it asks for one at
// once otherwise.
const refreshQuiet = time.Second

// refusedLocked handles an SOA query for zone that the secondary at addr
// answered with rcode. REFUSED or NOTAUTH from a secondary that took the
// zone's NOTIFY or transferred it means it does not serve the zone: it
// is polled no more (unpolled), and the serial it fetched last is
// confirmed. A SERVFAIL (a zone it is loading) after a transfer confirms
// the serial it fetched, and polling goes on. A secondary that neither
// transferred the zone nor took its NOTIFY, or gave another answer, is
// not confirmed: it stays behind.
func (t *tracker) refusedLocked(addr netip.AddrPort, zone string, pz *peerZone, rcode int, now time.Time) {
	switch {
	case rcode == dns.RcodeRefused || rcode == dns.RcodeNotAuth:
		if pz.fetched == 0 && !pz.accepted {
			return
		}
		pz.unpolled = true
		t.s.log.Info("secondary refuses SOA queries for a zone it follows: confirmed by its transfers and refresh queries",
			"zone", zone, "peer", addr.String(), "rcode", dns.RcodeToString[rcode], "fetched", pz.fetched)
		pz.confirmRefresh(now)
	case rcode != dns.RcodeServerFailure || pz.fetched == 0:
		return
	}
	if pz.fetched != 0 {
		pz.confirm(pz.fetched, now)
	}
}

// confirmRefresh confirms the serial the secondary's last SOA query was
// answered once refreshQuiet has passed without a transfer.
func (pz *peerZone) confirmRefresh(now time.Time) {
	if pz.refresh != 0 && now.Sub(pz.refreshAt) >= refreshQuiet {
		pz.confirm(pz.refresh, now)
		pz.refresh = 0
	}
}

// refreshed notes the answer m to an SOA query from addr: when it is a
// configured secondary of the zone, alone at its address (see
// transferred), this is its refresh, which an unpolled secondary's
// worker turns into a confirmation (confirmRefresh).
func (t *tracker) refreshed(addr netip.Addr, m *dns.Msg) {
	if m.Rcode != dns.RcodeSuccess || len(m.Answer) != 1 {
		return
	}
	soa, ok := m.Answer[0].(*dns.SOA)
	if !ok {
		return
	}
	zone := strings.ToLower(soa.Hdr.Name)
	// The first query answered with a serial counts: another (after a
	// NOTIFY sent again) says no more.
	if t.holder(addr, zone, func(pz *peerZone, now time.Time) {
		if pz.refresh != soa.Serial {
			pz.refresh, pz.refreshAt = soa.Serial, now
		}
	}) {
		t.s.log.Debug("SOA query from a secondary", "zone", zone, "peer", addr, "serial", soa.Serial)
	}
}

// holds records that an IXFR request from addr says it holds zone at
// serial, not ahead of the zone's (those are observed).
func (t *tracker) holds(addr netip.Addr, zone string, serial uint32) {
	t.holder(addr, zone, func(pz *peerZone, now time.Time) { pz.confirm(serial, now) })
}

// holder calls f with the state of zone on the configured secondary at
// addr, when one alone listens there and it is already followed, and
// reports whether it did.
func (t *tracker) holder(addr netip.Addr, zone string, f func(*peerZone, time.Time)) bool {
	st, z, peer, ok := t.requester(addr, zone)
	if !ok || !peer {
		return false
	}
	now := t.s.opts.Clock()
	t.mu.Lock()
	defer t.mu.Unlock()
	targets := t.portsFor(st, addr, z)
	if len(targets) != 1 {
		return false
	}
	pz := t.zoneLocked(targets[0], zone)
	if pz == nil {
		return false
	}
	f(pz, now)
	return true
}

// errUnpolled stands for the SOA query not asked of an unpolled
// secondary.
var errUnpolled = errors.New("not polled: the secondary refuses SOA queries for the zone")
