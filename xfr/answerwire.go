package xfr

import (
	"encoding/binary"
	"slices"
	"strings"
	"weak"

	"github.com/miekg/dns"
)

// A query the answer cache misses costs most of a query's CPU on the
// full path: the request parsed into a dns.Msg, each record turned into a
// dns.RR, a message built, measured against the size limit and packed
// with a compression map. For the commonest shape — records of the
// question's type at a name below a zone's apex — answerWire writes the
// answer straight from the stored records (rrwire.go) instead, octet for
// octet what the full path would send, and the cache keeps it as it
// keeps the full path's. Every other shape, and anything unsure, takes
// the full path.

// answerWire appends to out the answer to msg (parsed as q with st) when
// its question is lower case, of type A, AAAA, TXT or SRV, and names a node
// below a zone's apex with no CNAME, and either the node holds records of
// that type, or it holds none (NODATA), or the name does not exist
// (NXDOMAIN); and the answer fits the size limit. ok is false
// otherwise. z is the zone answered from, qname the question as the full
// path looks it up, rcode the answer's.
//
// The octets are the full path's: the header echoes ID, RD and CD with
// QR and AA set (dns.Msg.SetReply, answer); the owner of every record is
// the question name, which miekg/dns compresses to a pointer to the
// question as nameWriter does; the RDATA of these types holds no name
// but an SRV target, which neither compresses (RFC 2782), and whose
// addresses follow as Server.additional adds them (appendTargets; SRV
// records whose targets are in capitals or hold escapes are left to the
// full path); a negative answer's SOA (negativeSOA) is written as miekg/dns
// compresses it (soaCompressesAlike); the OPT record ends the message as
// st.shape adds it.
func (s *Server) answerWire(st *settings, q *quickQuery, msg, out []byte, nw *nameWriter) (ans []byte, z servedZone, qname string, rcode int, ok bool) {
	qtype := binary.BigEndian.Uint16(msg[q.qEnd-4:])
	// Other types are left to the full path before the lookup, which it
	// would do again: their answers hold names, or additional records.
	if !q.lower || qtype != dns.TypeA && qtype != dns.TypeAAAA && qtype != dns.TypeTXT && qtype != dns.TypeSRV {
		return nil, z, "", 0, false
	}
	qname = quickName(q)
	z, found := st.findLower(s.src, qname)
	if !found || z.snap == nil || qname == z.name {
		return nil, z, "", 0, false
	}
	recs, exists := z.snap.LookupExists(qname)
	out = append(out[:0], msg[:q.qEnd]...)
	out[2] = 0x80 | 0x04 | msg[2]&0x01 // QR, AA, RD; opcode QUERY
	out[3] = msg[3] & 0x10             // CD; rcode NOERROR
	binary.BigEndian.PutUint16(out[8:], 0)
	binary.BigEndian.PutUint16(out[10:], 0)
	nw.resetMessage(qname)
	n := 0
	var targets []srvTarget
	for _, rec := range recs {
		t := uint16(rec.Type)
		if t == dns.TypeCNAME {
			return nil, z, "", 0, false // it stands in for every type
		}
		if t != qtype {
			continue
		}
		rec.Name = qname
		var err error
		if out, err = nw.appendRecord(out, rec, st.ttl(rec)); err != nil {
			return nil, z, "", 0, false // the full path skips it, and logs why
		}
		n++
		if t == dns.TypeSRV {
			_, _, _, target, fast := splitSRV(rec.Data)
			if !fast || !lowerUnescaped(target) || target == "." {
				return nil, z, "", 0, false
			}
			// Written in full (RFC 2782), at the end of the record.
			off := len(out) - len(target) - 1
			if out[len(out)-1] != 0 || int(out[off]) != strings.IndexByte(target, '.') {
				return nil, z, "", 0, false
			}
			targets = append(targets, srvTarget{target, off})
		}
	}
	extra := 0
	if len(targets) > 0 {
		if out, extra, ok = s.appendTargets(st, z, qname, targets, out); !ok {
			return nil, z, "", 0, false
		}
	}
	rcode = dns.RcodeSuccess
	if n > 0 {
		binary.BigEndian.PutUint16(out[6:], uint16(n))
	} else {
		if !exists {
			rcode = dns.RcodeNameError
			out[3] |= dns.RcodeNameError
		}
		soa := st.negativeSOA(z, z.serial())
		if !soaCompressesAlike(soa, qname) {
			return nil, z, "", 0, false
		}
		if out, ok = nw.appendSOA(out, soa); !ok {
			return nil, z, "", 0, false
		}
		binary.BigEndian.PutUint16(out[8:], 1)
	}
	binary.BigEndian.PutUint16(out[10:], uint16(extra))
	shape := q.key[q.keyLen-1]
	if shape&keyEDNS != 0 {
		binary.BigEndian.PutUint16(out[10:], uint16(extra+1))
		var do byte
		if shape&keyDO != 0 {
			do = 0x80
		}
		out = append(out, 0, 0, byte(dns.TypeOPT))
		out = binary.BigEndian.AppendUint16(out, uint16(st.udpMaxPayload()))
		out = append(out, 0, 0, do, 0, 0, 0)
	}
	if len(out) > int(binary.BigEndian.Uint16(q.key[q.keyLen-3:])) {
		return nil, z, "", 0, false // the full path leaves records out
	}
	return out, z, qname, rcode, true
}

// srvTarget is the target of an SRV record answerWire wrote, and where
// in the message.
type srvTarget struct {
	name string
	off  int
}

// appendTargets appends the addresses of the SRV targets inside zone z
// as the full path's additional section holds them (Server.additional),
// and returns how many records it wrote; ok is false when one cannot be
// written as the full path would.
//
// Their owners are the targets, which miekg/dns compresses to a pointer
// to where its compression map first saw the name: the map holds every
// suffix of the question, and of each SRV target (written in full, but
// taken into the map all the same) the suffixes not in it already; so
// the first place the name occurs in full, or as a suffix, in the
// question and then in the targets in order (firstSeen).
func (s *Server) appendTargets(st *settings, z servedZone, qname string, targets []srvTarget, out []byte) (_ []byte, extra int, ok bool) {
	if len(out) > maxPointer {
		return nil, 0, false // past where a pointer reaches: the map stops taking names
	}
	var rw nameWriter
	var rec []byte
	for i, t := range targets {
		if !inZone(t.name, z.name) || slices.ContainsFunc(targets[:i], func(u srvTarget) bool { return u.name == t.name }) {
			continue
		}
		at := firstSeen(t.name, qname, targets)
		if at < 0 {
			return nil, 0, false // t is among targets: never, but no pointer to nowhere
		}
		for _, r := range z.snap.Lookup(t.name) {
			if rt := uint16(r.Type); rt != dns.TypeA && rt != dns.TypeAAAA {
				continue
			}
			// The record written after a question of its own name begins
			// with a pointer to it (offset 12), which the one to at
			// replaces.
			rw.resetMessage(t.name)
			var err error
			if rec, err = rw.appendRecord(rec[:0], r, st.ttl(r)); err != nil || len(rec) < 2 || rec[0] != 0xC0 || rec[1] != headerLen {
				return nil, 0, false
			}
			out = append(out, 0xC0|byte(at>>8), byte(at))
			out = append(out, rec[2:]...)
			extra++
		}
	}
	return out, extra, true
}

// firstSeen returns the offset of the first occurrence of name, whole
// or as a suffix, in the question qname (at offset 12) and then in the
// targets; -1 when there is none.
func firstSeen(name, qname string, targets []srvTarget) int {
	if isSuffixName(qname, name) {
		return headerLen + len(qname) - len(name)
	}
	for _, t := range targets {
		if isSuffixName(t.name, name) {
			return t.off + len(t.name) - len(name)
		}
	}
	return -1
}

// isSuffixName reports whether the absolute name s is name or ends with
// it after a label.
func isSuffixName(name, s string) bool {
	return strings.HasSuffix(name, s) && (len(name) == len(s) || name[len(name)-len(s)-1] == '.')
}

// lowerUnescaped reports whether the name is lower case without escapes:
// miekg/dns's compression map compares names as spelled.
func lowerUnescaped(n string) bool {
	return strings.IndexFunc(n, func(r rune) bool { return r == '\\' || r >= 'A' && r <= 'Z' }) < 0
}

// soaCompressesAlike reports whether nameWriter compresses the names of
// soa, in the authority section after the question qname, as miekg/dns
// does: miekg/dns points a name at the longest suffix of any name before
// it, nameWriter the SOA's names at the question's alone. They agree when
// the names are lower case without escapes (miekg/dns's map is
// case-sensitive) and MNAME shares no more labels with RNAME than the
// question does (the owner, the zone, is a suffix of the question).
func soaCompressesAlike(soa *dns.SOA, qname string) bool {
	for _, n := range []string{soa.Ns, soa.Mbox} {
		if strings.IndexFunc(n, func(r rune) bool { return r == '\\' || r >= 'A' && r <= 'Z' }) >= 0 {
			return false
		}
	}
	return sharedLabels(soa.Mbox, soa.Ns) <= sharedLabels(soa.Mbox, qname)
}

// sharedLabels counts the labels that the absolute names a and b end
// with alike.
func sharedLabels(a, b string) int {
	n := 0
	for len(a) > 1 && len(b) > 1 {
		i := strings.LastIndexByte(a[:len(a)-1], '.') + 1 // the last label's start
		j := strings.LastIndexByte(b[:len(b)-1], '.') + 1
		if a[i:] != b[j:] {
			break
		}
		n++
		a, b = a[:i], b[:j]
	}
	return n
}

// quickName is the question name of q's key in presentation form: labels
// of the characters parseQuick lets through, which need no escapes.
func quickName(q *quickQuery) string {
	var b strings.Builder
	b.Grow(q.keyLen)
	for off := 0; q.key[off] != 0; off += 1 + int(q.key[off]) {
		b.Write(q.key[off+1 : off+1+int(q.key[off])])
		b.WriteByte('.')
	}
	return b.String()
}

// rememberWire caches (a copy of) ans, the answer answerWire wrote to q from zone z
// with rcode, as remember caches the full path's answer to a lower-case
// request.
func (st *settings) rememberWire(q *quickQuery, ans []byte, z servedZone, qname string, rcode int) {
	e := &answerEntry{msg: ans, rcode: rcode, qEnd: q.qEnd,
		qname: qname, zone: z.name, snap: weak.Make(z.snap), fixed: !isReverse(qname)}
	st.answers.put(q.key[:q.keyLen], e)
}
