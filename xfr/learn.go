package xfr

import (
	"net/netip"
	"time"

	"github.com/cnsd/cnsd/store"
)

// maxLearning bounds the addresses whose transfers are remembered. Only
// addresses the ACL lets transfer get there, but an allow_transfer prefix
// may be large.
const maxLearning = 4096

// transferHistory is what the tracker remembers of the transfers of one
// zone by one address. A configured peer's transfer marks it (peer): for
// the catalog zone, which NOTIFY reaches only at the peers of other zones
// that follow it. Any other address is counted (learn_peers): the serial
// of its last transfer, when that was, and how many successive serials
// it has fetched without a pause of forget_after.
type transferHistory struct {
	peer   bool
	serial uint32
	last   time.Time
	count  int
}

// learnt reports whether the address is a learnt peer at now: it fetched
// enough successive serials and has not been quiet too long.
func (h *transferHistory) learnt(st *settings, now time.Time) bool {
	lp := st.cfg.LearnPeers
	return lp.Enabled && h.count >= lp.AfterTransfers && now.Sub(h.last) < lp.ForgetAfter
}

// peerSet is the set of addresses of the configured secondaries that may
// transfer z: its peers, and for the catalog zone every zone's.
func (t *tracker) peerSet(st *settings, z servedZone) map[netip.Addr]bool {
	set := map[netip.Addr]bool{}
	for _, access := range st.transferPeers(z) {
		for _, a := range t.peerAddrs(access) {
			set[a] = true
		}
	}
	return set
}

// recordLocked notes that addr transferred zone at serial, and reports
// whether addr is now a NOTIFY target of the zone: always for a
// configured peer, and for another address only once learn_peers has
// learnt it. Nothing is kept of other addresses while learn_peers is off.
func (t *tracker) recordLocked(st *settings, addr netip.Addr, zone string, serial uint32, peer bool, now time.Time) bool {
	if !peer && !st.cfg.LearnPeers.Enabled {
		return false
	}
	zones := t.learnt[addr]
	if zones == nil {
		if len(t.learnt) >= maxLearning {
			t.expireLocked(st, now)
		}
		if len(t.learnt) >= maxLearning && !peer {
			return false
		}
		zones = map[string]*transferHistory{}
		t.learnt[addr] = zones
	}
	h := zones[zone]
	switch {
	case h == nil || now.Sub(h.last) >= st.cfg.LearnPeers.ForgetAfter:
		h = &transferHistory{count: 1}
		zones[zone] = h
	case store.Serial(h.serial).Less(store.Serial(serial)):
		// A new serial: what a secondary fetches, and what an
		// operator running dig twice in a row mostly does not.
		h.count++
	}
	h.peer = h.peer || peer
	h.serial, h.last = serial, now
	return peer || h.learnt(st, now)
}

// expireLocked forgets the transfers of addresses that are not configured
// peers and have been quiet for forget_after (every one of them when
// learn_peers is off).
func (t *tracker) expireLocked(st *settings, now time.Time) {
	for addr, zones := range t.learnt {
		for zone, h := range zones {
			if !h.peer && (!st.cfg.LearnPeers.Enabled || now.Sub(h.last) >= st.cfg.LearnPeers.ForgetAfter) {
				delete(zones, zone)
			}
		}
		if len(zones) == 0 {
			delete(t.learnt, addr)
		}
	}
}
