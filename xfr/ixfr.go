package xfr

import (
	"errors"

	"github.com/miekg/dns"

	"github.com/cnsd/cnsd/store"
)

// serveIXFR answers an incremental transfer (RFC 1995): one SOA when the
// client is current or asks over UDP, the changes since its serial when
// the journal has them and they are smaller than the zone, else the whole
// zone.
func (s *Server) serveIXFR(w dns.ResponseWriter, r *dns.Msg, st *settings) {
	have, ok := clientSerial(r)
	if !ok {
		s.reply(w, r, dns.RcodeFormatError)
		return
	}
	z, ok := s.transferZone(w, r, st, "IXFR")
	if !ok {
		return
	}
	cur := z.snap.Serial()
	if isAhead(uint32(have), cur) {
		s.peers.observed(remoteAddr(w), z.name, uint32(have))
	} else {
		s.peers.holds(remoteAddr(w), z.name, uint32(have))
	}
	x := newStream(w, r, st)
	soa := st.soa(z, uint32(cur))
	var err error
	kind := "ixfr"
	switch diff, derr := s.diffs.since(z.snap, have); {
	case !isTCP(w) || have == cur || cur.Less(have):
		// RFC 1995 §2: over UDP the SOA tells the client to retry over TCP.
		kind = ""
		if err = x.add(soa); err == nil {
			err = x.flush()
		}
	case derr == nil && len(diff.Removed)+len(diff.Added) < z.snap.Len():
		err = s.sendDiff(x, st, z, diff)
	default:
		if derr != nil && !errors.Is(derr, store.ErrNotCovered) {
			s.log.Warn("IXFR falls back to the whole zone", "zone", z.name, "err", derr)
		}
		kind = "axfr"
		err = s.sendFull(x, st, z)
	}
	if err != nil {
		s.transferAborted("IXFR", z, remoteAddr(w), x, err)
		return
	}
	s.log.Debug("IXFR sent", "zone", z.name, "peer", remoteAddr(w), "from", uint32(have),
		"serial", uint32(cur), "kind", kind, "records", x.records)
	if kind != "" {
		s.countTransfer(kind, x)
		s.peers.transferred(remoteAddr(w), z.name, uint32(cur), kind)
	}
}

// clientSerial is the serial of the SOA in the request's authority
// section, where an IXFR request carries the version the client has.
func clientSerial(r *dns.Msg) (store.Serial, bool) {
	if len(r.Ns) != 1 {
		return 0, false
	}
	soa, ok := r.Ns[0].(*dns.SOA)
	if !ok {
		return 0, false
	}
	return store.Serial(soa.Serial), true
}

// sendDiff streams one condensed difference: the new SOA, the old SOA,
// what was removed, the new SOA, what was added, and the new SOA again.
func (s *Server) sendDiff(x *stream, st *settings, z servedZone, d store.Diff) error {
	soa := st.soa(z, uint32(d.To))
	if err := x.add(soa); err != nil {
		return err
	}
	if err := x.add(st.soa(z, uint32(d.From))); err != nil {
		return err
	}
	for _, recs := range [][]store.Record{d.Removed, d.Added} {
		for i := range recs {
			if err := s.addStored(x, st, z, &recs[i]); err != nil {
				return err
			}
		}
		if err := x.add(soa); err != nil {
			return err
		}
	}
	return x.flush()
}
