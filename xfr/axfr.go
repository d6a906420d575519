package xfr

import (
	"errors"
	"fmt"
	"net"
	"net/netip"
	"strings"

	"github.com/miekg/dns"

	"github.com/cnsd/cnsd/store"
)

// errRefused is a transfer this server will not give; the reason is
// logged, the client sees the rcode only.
var errRefused = errors.New("refused")

// serveAXFR sends a whole zone over TCP (RFC 5936) from one snapshot,
// however long the transfer takes and whatever commits happen meanwhile.
func (s *Server) serveAXFR(w dns.ResponseWriter, r *dns.Msg, st *settings) {
	z, ok := s.transferZone(w, r, st, "AXFR")
	if !ok {
		return
	}
	x := newStream(w, r, st)
	if err := s.sendFull(x, st, z); err != nil {
		s.transferAborted("AXFR", z, remoteAddr(w), x, err)
		return
	}
	s.log.Debug("AXFR sent", "zone", z.name, "peer", remoteAddr(w), "serial", z.serial(),
		"records", x.records, "messages", x.msgs)
	s.countTransfer("axfr", x)
	s.peers.transferred(remoteAddr(w), z.name, z.serial(), "axfr")
}

// transferZone finds the zone a transfer request asks for and checks
// that the client may have it, answering the request itself when not.
func (s *Server) transferZone(w dns.ResponseWriter, r *dns.Msg, st *settings, kind string) (servedZone, bool) {
	q := r.Question[0]
	name := strings.ToLower(q.Name)
	z, ok := st.zone(s.src, name)
	rcode := dns.RcodeSuccess
	switch {
	case !ok:
		rcode = dns.RcodeNotAuth
		if _, inside := st.find(s.src, name); !inside {
			rcode = dns.RcodeRefused
			s.transfers.refused.Add(1)
		}
	case z.snap == nil:
		rcode = dns.RcodeServerFailure
	case kind == "AXFR" && !isTCP(w):
		// RFC 5936 §4.2: AXFR is not defined over UDP.
		rcode = dns.RcodeFormatError
	}
	if rcode == dns.RcodeSuccess {
		if err := s.mayTransfer(w, r, st, z); err != nil {
			peer := remoteAddr(w)
			s.warnClient(kind+"|"+peer.String()+"|"+z.name+"|"+err.Error(), kind+" refused",
				"zone", z.name, "peer", peer, "reason", err)
			rcode = dns.RcodeRefused
			s.transfers.refused.Add(1)
		}
	}
	if rcode != dns.RcodeSuccess {
		s.reply(w, r, rcode)
		return servedZone{}, false
	}
	return z, true
}

// sendFull streams the whole zone: SOA, NS, every record, SOA.
func (s *Server) sendFull(x *stream, st *settings, z servedZone) error {
	soa := st.soa(z, z.serial())
	if err := x.add(soa); err != nil {
		return err
	}
	if !z.storedNS() {
		for _, ns := range st.nsRecords(z) {
			if err := x.add(ns); err != nil {
				return err
			}
		}
	}
	for recs := range z.snap.Runs() {
		for i := range recs {
			if err := s.addStored(x, st, z, &recs[i]); err != nil {
				return err
			}
		}
	}
	if err := x.add(soa); err != nil {
		return err
	}
	return x.flush()
}

// addStored queues one stored record; one that cannot be served is
// skipped with a log line.
// rec is read in place, not modified.
func (s *Server) addStored(x *stream, st *settings, z servedZone, rec *store.Record) error {
	err := x.addRecord(rec, st.ttl(*rec))
	if errors.Is(err, errBadRecord) {
		s.log.Warn("skipping a record that cannot be served", "zone", z.name, "err", err)
		return nil
	}
	return err
}

func isTCP(w dns.ResponseWriter) bool {
	_, ok := w.RemoteAddr().(*net.TCPAddr)
	return ok
}

// remoteAddr is the client's address without port, IPv4 unmapped.
func remoteAddr(w dns.ResponseWriter) netip.Addr {
	var ip net.IP
	switch a := w.RemoteAddr().(type) {
	case *net.TCPAddr:
		ip = a.IP
	case *net.UDPAddr:
		ip = a.IP
	}
	addr, _ := netip.AddrFromSlice(ip)
	return addr.Unmap()
}

func refusal(format string, args ...any) error {
	return fmt.Errorf("%w: %s", errRefused, fmt.Sprintf(format, args...))
}
