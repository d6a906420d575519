package xfr

import (
	"strings"
	"time"

	"github.com/miekg/dns"
)

// How large an answer may be, and what is left out when it is larger:
//
//   - over UDP, the client's EDNS0 buffer size, but never more than
//     dns.udp_max_payload (1232 by default, the DNS Flag Day 2020 value
//     that avoids IP fragmentation, as Knot and NSD cap it) nor less than
//     512; 512 without EDNS0 (RFC 1035 §4.2.1);
//   - over TCP, the largest message there is.
//
// RFC 2181 §9: TC means that the required records — the answer and
// authority sections — did not fit; the client must retry over TCP.
// Additional records are a convenience: those that do not fit are left
// out, whole RRsets at a time so that no cache takes part of an RRset for
// all of it, and TC stays clear. When the required records do not fit,
// the answer carries the question only, with TC, as Knot and NSD send it:
// a part of an answer is of no use to a client that must ask again.

// defaultUDPPayload is the UDP answer size when the configuration gives
// none: the DNS Flag Day 2020 value.
const defaultUDPPayload = 1232

// udpMaxPayload is the largest answer sent over UDP, which the answers'
// OPT records also advertise as what cnsd takes.
func (st *settings) udpMaxPayload() int {
	if n := st.cfg.DNS.UDPMaxPayload; n >= dns.MinMsgSize {
		return n
	}
	return defaultUDPPayload
}

// sizeLimit is how large the answer to r may be on w's transport.
func (st *settings) sizeLimit(w dns.ResponseWriter, r *dns.Msg) int {
	if isTCP(w) {
		return dns.MaxMsgSize
	}
	opt := r.IsEdns0()
	if opt == nil {
		return dns.MinMsgSize
	}
	return min(max(int(opt.UDPSize()), dns.MinMsgSize), st.udpMaxPayload())
}

// write sends m, the answer to r, sized for the transport: with an OPT
// record when r had one, signed when r was, and cut as the rules above
// say when it is too large.
func (s *Server) write(w dns.ResponseWriter, r *dns.Msg, m *dns.Msg, st *settings) {
	limit := st.sizeLimit(w, r)
	if t := r.IsTsig(); t == nil {
		st.shape(m, r, limit)
	} else {
		// The answer's TSIG record is as long as the request's: same
		// key name, algorithm and MAC size.
		st.shape(m, r, limit-dns.Len(t))
		// Verified by ServeDNS; the answer is signed in turn (RFC 8945).
		m.SetTsig(t.Hdr.Name, t.Algorithm, t.Fudge, time.Now().Unix())
	}
	if err := w.WriteMsg(m); err != nil {
		s.log.Debug("cannot send an answer", "peer", w.RemoteAddr().String(), "err", err)
	}
}

// shape gives m, the answer to the unsigned request r, its OPT record
// when r had one and cuts it to limit octets.
func (st *settings) shape(m, r *dns.Msg, limit int) {
	if opt := r.IsEdns0(); opt != nil {
		m.SetEdns0(uint16(st.udpMaxPayload()), opt.Do())
	}
	fit(m, limit)
}

// fit cuts m down to limit octets packed with compression: additional
// RRsets that do not fit are left out, and when the answer and authority
// sections do not fit either, only the question is left, with TC set.
// The OPT record, last in the additional section, always stays.
func fit(m *dns.Msg, limit int) {
	// Compression only ever shortens a message, so the uncompressed
	// length, which costs no allocation, settles most answers.
	m.Compress = false
	plain := m.Len()
	m.Compress = true
	if plain <= limit || m.Len() <= limit {
		return
	}
	extra, opt := m.Extra, m.Extra[len(m.Extra):]
	if n := len(extra); n > 0 && extra[n-1].Header().Rrtype == dns.TypeOPT {
		extra, opt = extra[:n-1], extra[n-1:]
	}
	m.Extra = opt
	used := m.Len()
	if used > limit {
		m.Answer, m.Ns = nil, nil
		m.Truncated = true
		return
	}
	kept := make([]dns.RR, 0, len(extra)+len(opt))
	for len(extra) > 0 {
		set := extra[:rrsetLen(extra)]
		extra = extra[len(set):]
		upper := 0 // the set's uncompressed length: it takes no more
		for _, rr := range set {
			upper += dns.Len(rr)
		}
		if used+upper > limit {
			// It may still fit compressed.
			m.Extra = append(append(append(m.Extra[:0:0], kept...), set...), opt...)
			n := m.Len()
			if n > limit {
				break
			}
			upper = n - used
		}
		kept = append(kept, set...)
		used += upper
	}
	m.Extra = append(kept, opt...)
}

// rrsetLen is the number of records at the start of rrs that share the
// first one's owner name and type.
func rrsetLen(rrs []dns.RR) int {
	first := rrs[0].Header()
	n := 1
	for n < len(rrs) && rrs[n].Header().Rrtype == first.Rrtype && strings.EqualFold(rrs[n].Header().Name, first.Name) {
		n++
	}
	return n
}
