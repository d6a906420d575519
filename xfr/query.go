package xfr

import (
	"strings"

	"github.com/miekg/dns"
)

// maxChain bounds how many CNAMEs a query follows inside a zone, so that
// a loop in the records cannot keep the handler busy.
const maxChain = 8

// serveQuery answers a normal (non-transfer) query from the snapshot of
// the zone the name falls in.
func (s *Server) serveQuery(w dns.ResponseWriter, r *dns.Msg, st *settings) {
	m, z := s.answer(r, st)
	s.countQuery(m.Rcode)
	s.peers.refreshed(remoteAddr(w), m) // a secondary's SOA query (unpolled.go)
	if s.rateLimited(w, r, m.Rcode) {
		return
	}
	s.write(w, r, m, st)
	if f, ok := w.(answerFiller); ok {
		if q, sent := f.fill(st); q != nil {
			s.remember(st, w, q, r, m, z, sent)
		}
	}
}

// answer builds the reply to a query, and returns the zone it comes from
// (its snapshot nil when none does), which the answer cache keeps.
func (s *Server) answer(r *dns.Msg, st *settings) (*dns.Msg, servedZone) {
	q := r.Question[0]
	m := new(dns.Msg)
	m.SetReply(r)
	m.Compress = true
	if q.Qclass != dns.ClassINET && q.Qclass != dns.ClassANY {
		m.Rcode = dns.RcodeRefused
		return m, servedZone{}
	}
	if opt := r.IsEdns0(); opt != nil && opt.Version() != 0 {
		m.Rcode = dns.RcodeBadVers
		return m, servedZone{}
	}
	z, ok := st.find(s.src, q.Name)
	if !ok {
		m.Rcode = dns.RcodeRefused
		return m, servedZone{}
	}
	if z.snap == nil {
		// A configured zone the store has not created yet: nothing true
		// can be said about it.
		m.Rcode = dns.RcodeServerFailure
		return m, servedZone{}
	}
	m.Authoritative = true
	s.resolve(m, st, z, q)
	return m, z
}

// resolve fills m with the answer to q inside zone z, following CNAMEs
// that stay in the zone.
func (s *Server) resolve(m *dns.Msg, st *settings, z servedZone, q dns.Question) {
	name := strings.ToLower(q.Name)
	owner := q.Name // the first answer echoes the question's spelling
	for range maxChain {
		rrs, exists := s.rrset(st, z, name, owner, q.Qtype)
		if len(rrs) > 0 {
			m.Answer = append(m.Answer, rrs...)
			if cname, ok := rrs[0].(*dns.CNAME); ok && q.Qtype != dns.TypeCNAME && q.Qtype != dns.TypeANY {
				target := strings.ToLower(cname.Target)
				if !inZone(target, z.name) {
					return
				}
				name, owner = target, target
				continue
			}
			s.additional(m, st, z, rrs)
			return
		}
		if !exists {
			m.Rcode = dns.RcodeNameError
		}
		m.Ns = append(m.Ns, st.negativeSOA(z, z.serial()))
		return
	}
}

// rrset returns the records of qtype at name (or its CNAME, which stands
// in for every type), with owner as their owner name. exists reports
// whether the name exists at all, for NODATA versus NXDOMAIN.
func (s *Server) rrset(st *settings, z servedZone, name, owner string, qtype uint16) (rrs []dns.RR, exists bool) {
	apex := name == z.name
	if apex {
		switch qtype {
		case dns.TypeSOA, dns.TypeANY:
			// RFC 8482: one RRset answers ANY, and the SOA is always there.
			soa := st.soa(z, z.serial())
			soa.Hdr.Name = owner
			return []dns.RR{soa}, true
		case dns.TypeNS:
			if z.storedNS() {
				break // answered from the store below
			}
			ns := st.nsRecords(z)
			for _, rr := range ns {
				rr.Header().Name = owner
			}
			return ns, true
		}
	}
	recs, exists := z.snap.LookupExists(name)
	if qtype == dns.TypeANY && len(recs) > 0 {
		qtype = uint16(recs[0].Type)
	}
	for _, rec := range recs {
		t := uint16(rec.Type)
		if t != qtype && t != dns.TypeCNAME {
			continue
		}
		if t == dns.TypeCNAME && len(rrs) > 0 {
			continue // records of qtype next to a CNAME: serve those
		}
		rr, err := toRR(rec, st.ttl(rec))
		if err != nil {
			s.log.Warn("skipping a record that cannot be served", "zone", z.name, "err", err)
			continue
		}
		rr.Header().Name = owner
		if t == dns.TypeCNAME {
			return []dns.RR{rr}, true
		}
		rrs = append(rrs, rr)
	}
	return rrs, apex || exists
}

// additional adds the addresses of SRV targets inside the zone, so that a
// client needs no second round trip.
func (s *Server) additional(m *dns.Msg, st *settings, z servedZone, rrs []dns.RR) {
	seen := map[string]bool{}
	for _, rr := range rrs {
		srv, ok := rr.(*dns.SRV)
		if !ok {
			continue
		}
		target := strings.ToLower(srv.Target)
		if seen[target] || !inZone(target, z.name) {
			continue
		}
		seen[target] = true
		for _, rec := range z.snap.Lookup(target) {
			if t := uint16(rec.Type); t != dns.TypeA && t != dns.TypeAAAA {
				continue
			}
			if a, err := toRR(rec, st.ttl(rec)); err == nil {
				m.Extra = append(m.Extra, a)
			}
		}
	}
}

// inZone reports whether name (absolute, lower-case) is zone or below it.
func inZone(name, zone string) bool {
	if !strings.HasSuffix(name, zone) {
		return false
	}
	return len(name) == len(zone) || zone == "." || name[len(name)-len(zone)-1] == '.'
}
