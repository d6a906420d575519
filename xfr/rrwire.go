package xfr

import (
	"encoding/binary"
	"fmt"
	"net/netip"
	"strings"

	"github.com/miekg/dns"

	"github.com/cnsd/cnsd/store"
)

// Transfers write stored records straight into the message buffer in
// wire form: building a dns.RR per record and packing it with a
// compression map per message cost most of a transfer's CPU (issue 18).
// appendRecord must give exactly the octets that toRR and miekg/dns
// would, up to name compression; FuzzAppendRecord checks it.

// maxPointer is the largest offset a compression pointer can hold.
const maxPointer = 0x3fff

// nameRef remembers one name written earlier in the message, so that a
// later name sharing a suffix with it can point there (RFC 1035 §4.1.4).
// Records come in canonical order, so the previous owner shares the
// longest suffix with the next one far more often than not; one or two
// references cost a comparison where a map would cost hashing every
// suffix.
type nameRef struct {
	name   string   // presentation form, no escapes; "" when none
	starts []int    // index in name where each label starts
	offs   []uint16 // wire offset of the suffix from each label; 0 when it cannot be pointed to
}

func (n *nameRef) reset() { n.name, n.starts, n.offs = "", n.starts[:0], n.offs[:0] }

// set makes n the reference to name, written with the given label starts
// and suffix offsets (copied).
func (n *nameRef) set(name string, starts []int, offs []uint16) {
	n.name = name
	n.starts = append(n.starts[:0], starts...)
	n.offs = append(n.offs[:0], offs...)
}

// match returns how the name s (labels starting at starts) shares a
// suffix with n: the first label of s from which a pointer can be used,
// and the label of n it points to; ok is false when nothing but the
// root is shared.
func (n *nameRef) match(s string, starts []int) (label, at int, ok bool) {
	if n.name == "" {
		return 0, 0, false
	}
	i, j := commonSuffix(s, n.name)
	// s[i:] == n.name[j:]; the shared labels start at the first label
	// boundary of both at or after i.
	for label = 0; label < len(starts) && starts[label] < i; label++ {
	}
	for ; label < len(starts); label++ {
		k := j + starts[label] - i // the same position in n.name
		if l := labelAt(n.starts, k); l >= 0 && n.offs[l] != 0 {
			return label, l, true
		}
	}
	return 0, 0, false
}

// labelAt returns the index of the label starting at k, or -1.
func labelAt(starts []int, k int) int {
	for l, st := range starts {
		if st == k {
			return l
		}
		if st > k {
			break
		}
	}
	return -1
}

// nameWriter writes names into a message, compressing them against the
// question name and the previous owner (and, for names in RDATA, the
// previous such name). Its state changes only when a record is
// committed, so a record abandoned half-written leaves no pointer to
// octets that will be overwritten.
type nameWriter struct {
	apex, owner, target nameRef
	// pending holds the references a record being written would set.
	pendOwner, pendTarget nameRef
	hasOwner, hasTarget   bool
	starts                []int
	offs                  []uint16
	scratch               []byte
}

// resetMessage starts a new message whose question name, at offset 12,
// is qname.
func (nw *nameWriter) resetMessage(qname string) {
	nw.owner.reset()
	nw.target.reset()
	nw.apex.reset()
	nw.hasOwner, nw.hasTarget = false, false
	if ok, escaped := nw.scanName(qname); !ok || escaped {
		return
	}
	nw.offs = nw.offs[:0]
	off := headerLen
	for _, st := range nw.starts {
		nw.offs = append(nw.offs, uint16(off))
		next := strings.IndexByte(qname[st:], '.')
		off += next + 1
	}
	nw.apex.set(qname, nw.starts, nw.offs)
}

// commit makes the references of the record just written current.
func (nw *nameWriter) commit() {
	if nw.hasOwner {
		nw.owner, nw.pendOwner = nw.pendOwner, nw.owner
	}
	if nw.hasTarget {
		nw.target, nw.pendTarget = nw.pendTarget, nw.target
	}
	nw.hasOwner, nw.hasTarget = false, false
}

// name appends s to b: compressed against the references when compress
// is set (the owner, or RDATA names of the RFC 1035 types), else in full.
// owner says which pending reference the name becomes. Names with
// escapes go through miekg/dns, uncompressed.
func (nw *nameWriter) name(b []byte, s string, compress, owner bool) ([]byte, bool) {
	if owner && s == nw.owner.name && len(nw.owner.offs) > 0 && nw.owner.offs[0] != 0 {
		// The previous record's owner, as for every record of an RRset
		// and every RRset of a name after the first.
		return binary.BigEndian.AppendUint16(b, 0xc000|nw.owner.offs[0]), true
	}
	ok, escaped := nw.scanName(s)
	if !ok && !escaped {
		// scanName stops at the first fault; an escape after it
		// still sends the name to miekg/dns.
		escaped = strings.IndexByte(s, '\\') >= 0
	}
	if escaped {
		return nw.escapedName(b, s)
	}
	if !ok {
		return b, false
	}
	lit := len(nw.starts) // labels written in full, before a pointer
	var to *nameRef       // what the pointer points into
	at := 0               // at its label at
	if compress {
		for _, ref := range [...]*nameRef{&nw.owner, &nw.apex, &nw.target} {
			// A suffix of ref has at most its labels, so a ref too
			// short to beat lit is not compared.
			if lit <= len(nw.starts)-len(ref.starts) {
				continue
			}
			if l, a, ok := ref.match(s, nw.starts); ok && l < lit {
				lit, to, at = l, ref, a
			}
		}
	}
	nw.offs = nw.offs[:0]
	for l := range lit {
		off := len(b)
		if off > maxPointer {
			off = 0
		}
		nw.offs = append(nw.offs, uint16(off))
		end := len(s) - 1
		if l+1 < len(nw.starts) {
			end = nw.starts[l+1] - 1
		}
		b = append(b, byte(end-nw.starts[l]))
		b = append(b, s[nw.starts[l]:end]...)
	}
	if to != nil {
		b = binary.BigEndian.AppendUint16(b, 0xc000|to.offs[at])
		// The labels from the pointer on are where the name pointed
		// into has them.
		nw.offs = append(nw.offs, to.offs[at:at+len(nw.starts)-lit]...)
	} else {
		b = append(b, 0)
	}
	ref := &nw.pendTarget
	if owner {
		ref = &nw.pendOwner
		nw.hasOwner = true
	} else {
		nw.hasTarget = true
	}
	ref.set(s, nw.starts, nw.offs)
	return b, true
}

// escapedName appends s, which holds escapes, in full.
func (nw *nameWriter) escapedName(b []byte, s string) ([]byte, bool) {
	if _, ok := dns.IsDomainName(s); !ok || !dns.IsFqdn(s) {
		return b, false
	}
	if cap(nw.scratch) < 256 {
		nw.scratch = make([]byte, 256)
	}
	n, err := dns.PackDomainName(s, nw.scratch[:256], 0, nil, false)
	if err != nil || n > 255 {
		return b, false
	}
	return append(b, nw.scratch[:n]...), true
}

// appendRecord appends r, with the TTL ttl, to the message b in wire
// form. It returns b unchanged and an error from badRecord for a record
// that cannot be served; toRR refuses the same records.
func (nw *nameWriter) appendRecord(b []byte, r store.Record, ttl uint32) ([]byte, error) {
	return nw.appendStored(b, &r, ttl)
}

// appendStored is appendRecord for a record it may read in place: a
// transfer's records are the snapshot's, and copying each (56 octets)
// through the calls cost a tenth of an AXFR's CPU.
func (nw *nameWriter) appendStored(b []byte, r *store.Record, ttl uint32) ([]byte, error) {
	nw.hasOwner, nw.hasTarget = false, false
	switch uint16(r.Type) {
	case dns.TypeA, dns.TypeAAAA, dns.TypePTR, dns.TypeNS, dns.TypeCNAME, dns.TypeSRV, dns.TypeTXT:
	default:
		// The zone-file parser reads the owner too (and makes a
		// relative one absolute).
		return nw.appendOther(b, *r, ttl)
	}
	mark := len(b)
	b, ok := nw.name(b, r.Name, true, true)
	if !ok {
		return b[:mark], badRecord(*r, "owner is not an absolute domain name")
	}
	b = binary.BigEndian.AppendUint16(b, uint16(r.Type))
	b = binary.BigEndian.AppendUint16(b, dns.ClassINET)
	b = binary.BigEndian.AppendUint32(b, ttl)
	b = append(b, 0, 0) // RDLENGTH, set below
	rdata := len(b)
	var why string
	switch uint16(r.Type) {
	case dns.TypeA:
		if v, fast := parseIPv4(r.Data); fast {
			b = append(b, v[:]...)
			break
		}
		a, err := netip.ParseAddr(r.Data)
		if ok = err == nil && a.Zone() == "" && (a.Is4() || a.Is4In6()); ok {
			v := a.Unmap().As4()
			b = append(b, v[:]...)
		}
		why = "not an IPv4 address"
	case dns.TypeAAAA:
		a, err := netip.ParseAddr(r.Data)
		if ok = err == nil && a.Zone() == "" && a.Is6() && !a.Is4In6(); ok {
			v := a.As16()
			b = append(b, v[:]...)
		}
		why = "not an IPv6 address"
	case dns.TypePTR, dns.TypeNS, dns.TypeCNAME:
		b, ok = nw.name(b, r.Data, true, false)
		why = "not an absolute domain name"
	case dns.TypeSRV:
		b, why = nw.srv(b, r.Data)
		ok = why == ""
	case dns.TypeTXT:
		b, why = appendTXT(b, r.Data)
		ok = why == ""
	}
	if !ok {
		nw.hasOwner, nw.hasTarget = false, false
		return b[:mark], badRecord(*r, why)
	}
	binary.BigEndian.PutUint16(b[rdata-2:], uint16(len(b)-rdata))
	nw.commit()
	return b, nil
}

// appendSOA appends soa with its names compressed (RFC 1035 §4.1.4
// allows it in SOA RDATA); ok is false for a name that cannot be
// written so, which the caller then packs with miekg/dns.
func (nw *nameWriter) appendSOA(b []byte, soa *dns.SOA) ([]byte, bool) {
	mark := len(b)
	nw.hasOwner, nw.hasTarget = false, false
	b, ok := nw.name(b, soa.Hdr.Name, true, true)
	if !ok {
		return b[:mark], false
	}
	b = binary.BigEndian.AppendUint16(b, dns.TypeSOA)
	b = binary.BigEndian.AppendUint16(b, soa.Hdr.Class)
	b = binary.BigEndian.AppendUint32(b, soa.Hdr.Ttl)
	b = append(b, 0, 0)
	rdata := len(b)
	for _, n := range []string{soa.Ns, soa.Mbox} {
		if b, ok = nw.name(b, n, true, false); !ok {
			nw.hasOwner, nw.hasTarget = false, false
			return b[:mark], false
		}
	}
	for _, v := range []uint32{soa.Serial, soa.Refresh, soa.Retry, soa.Expire, soa.Minttl} {
		b = binary.BigEndian.AppendUint32(b, v)
	}
	binary.BigEndian.PutUint16(b[rdata-2:], uint16(len(b)-rdata))
	nw.commit()
	return b, true
}

// appendOther converts a record of a type zonegen does not emit through
// miekg/dns's zone-file parser, as toRR does, and packs it in full.
func (nw *nameWriter) appendOther(b []byte, r store.Record, ttl uint32) ([]byte, error) {
	rr, err := toRR(r, ttl)
	if err != nil {
		return b, err
	}
	if rr.Header().Name == "" {
		// The parser takes a blank owner for "the previous one", which
		// is none here, and miekg/dns then packs no owner at all.
		return b, badRecord(r, "no owner")
	}
	if n := dns.Len(rr) + 64; cap(nw.scratch) < n {
		nw.scratch = make([]byte, n)
	}
	n, err := dns.PackRR(rr, nw.scratch[:cap(nw.scratch)], 0, nil, false)
	if err != nil {
		return b, badRecord(r, err.Error())
	}
	// miekg/dns packs some records it cannot parse back (names over 255
	// octets in RDATA); a secondary could not either. These types are
	// rare, so checking costs little.
	if _, _, err := dns.UnpackRR(nw.scratch[:n], 0); err != nil {
		return b, badRecord(r, err.Error())
	}
	return append(b, nw.scratch[:n]...), nil
}

// srv appends the RDATA of "priority weight port target"; why says what
// is wrong, "" when nothing.
func (nw *nameWriter) srv(b []byte, data string) ([]byte, string) {
	if p, w, port, target, fast := splitSRV(data); fast {
		b = binary.BigEndian.AppendUint16(b, p)
		b = binary.BigEndian.AppendUint16(b, w)
		b = binary.BigEndian.AppendUint16(b, port)
		b, ok := nw.name(b, target, false, false)
		if !ok {
			return b, "target is not an absolute domain name"
		}
		nw.hasTarget = false
		return b, ""
	}
	var f [4]string
	n := 0
	for field := range strings.FieldsSeq(data) {
		if n == len(f) {
			return b, "want priority weight port target"
		}
		f[n] = field
		n++
	}
	if n != len(f) {
		return b, "want priority weight port target"
	}
	for _, s := range f[:3] {
		v, ok := parseUint16(s)
		if !ok {
			return b, "bad number " + s
		}
		b = binary.BigEndian.AppendUint16(b, v)
	}
	// RFC 2782: the target is not compressed.
	b, ok := nw.name(b, f[3], false, false)
	if !ok {
		return b, "target is not an absolute domain name"
	}
	nw.hasTarget = false // an uncompressed name is no use as a reference
	return b, ""
}

// parseUint16 is strconv.ParseUint(s, 10, 16) without the error value.
func parseUint16(s string) (uint16, bool) {
	if s == "" {
		return 0, false
	}
	v := 0
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c < '0' || c > '9' {
			return 0, false
		}
		if v = v*10 + int(c-'0'); v > 0xffff {
			return 0, false
		}
	}
	return uint16(v), true
}

// appendTXT appends the character-strings of TXT presentation data, as
// parseTXT splits them and miekg/dns unescapes them (\DDD and \X).
func appendTXT(b []byte, s string) ([]byte, string) {
	if n := len(s) - 2; n >= 0 && n <= 255 && s[0] == '"' && strings.IndexByte(s[1:], '"') == n &&
		strings.IndexByte(s, '\\') < 0 {
		// One string without escapes, as zonegen writes them.
		b = append(b, byte(n))
		return append(b, s[1:n+1]...), ""
	}
	mark, count := len(b), 0
	for i := 0; i < len(s); {
		if s[i] == ' ' {
			i++
			continue
		}
		if s[i] != '"' {
			return b[:mark], fmt.Sprintf("character-string at offset %d does not start with a quote", i)
		}
		j := i + 1
		for ; j < len(s) && s[j] != '"'; j++ {
			if s[j] == '\\' {
				j++
			}
		}
		if j >= len(s) {
			return b[:mark], fmt.Sprintf("character-string at offset %d has no closing quote", i)
		}
		var ok bool
		if b, ok = appendCharString(b, s[i+1:j]); !ok {
			return b[:mark], "string exceeded 255 bytes in txt"
		}
		count++
		i = j + 1
	}
	if count == 0 {
		return b[:mark], "no character-string"
	}
	return b, ""
}

// appendCharString appends one character-string, unescaping it the way
// miekg/dns packs a TXT string, including its handling of a \DDD over
// 255 (wrapped) and of a final lone backslash (dropped).
func appendCharString(b []byte, s string) ([]byte, bool) {
	if len(s) > 256*4+1 {
		return b, false
	}
	at := len(b)
	b = append(b, 0)
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c == '\\' {
			i++
			if i == len(s) {
				break
			}
			c = s[i]
			if i+2 < len(s) && isDigit(s[i]) && isDigit(s[i+1]) && isDigit(s[i+2]) {
				c = (s[i]-'0')*100 + (s[i+1]-'0')*10 + (s[i+2] - '0')
				i += 2
			}
		}
		b = append(b, c)
	}
	n := len(b) - at - 1
	if n > 255 {
		return b[:at], false
	}
	b[at] = byte(n)
	return b, true
}

func isDigit(c byte) bool { return c >= '0' && c <= '9' }

// parseIPv4 parses a dotted quad without leading zeros, the form zonegen
// writes; fast is false for anything else, which netip then judges.
func parseIPv4(s string) (v [4]byte, fast bool) {
	i := 0
	for k := range v {
		if k > 0 {
			if i >= len(s) || s[i] != '.' {
				return v, false
			}
			i++
		}
		start, n := i, 0
		for ; i < len(s) && i-start < 3 && isDigit(s[i]); i++ {
			n = n*10 + int(s[i]-'0')
		}
		if i == start || n > 255 || (s[start] == '0' && i-start > 1) {
			return v, false
		}
		v[k] = byte(n)
	}
	return v, i == len(s)
}

// splitSRV splits "priority weight port target" separated by single
// spaces, numbers in plain digits; fast is false for anything else,
// which the general path then judges. One pass over the numbers and one
// over the target, eight octets at a time: an SRV record's data is read
// once per transfer, and a call to strings.IndexByte per field cost
// more than the fields.
func splitSRV(s string) (p, w, port uint16, target string, fast bool) {
	var v [3]uint16
	i := 0
	for k := range v {
		start, n := i, 0
		for ; i < len(s) && isDigit(s[i]); i++ {
			if n = n*10 + int(s[i]-'0'); n > 0xffff {
				return 0, 0, 0, "", false
			}
		}
		if i == start || i == len(s) || s[i] != ' ' {
			return 0, 0, 0, "", false
		}
		v[k] = uint16(n)
		i++
	}
	target = s[i:]
	if target == "" || !graphic(target) { // else strings.Fields may split it
		return 0, 0, 0, "", false
	}
	return v[0], v[1], v[2], target, true
}
