package xfr

import (
	"encoding/binary"

	"github.com/miekg/dns"
)

// A request whose EDNS0 record cannot be trusted is answered FORMERR,
// with the question and without OPT, as Knot and BIND answer it: two OPT
// records (RFC 6891 §6.1.1), an OPT outside the additional section or
// with an owner other than the root (§6.1.2, BIND's checks), and a
// message whose header counts records it does not hold or that goes on
// after its last record — a cut-off additional section may have lost
// the OPT or the TSIG record.

// ednsWellFormed reports whether r has at most one OPT record, in the
// additional section and owned by the root.
func ednsWellFormed(r *dns.Msg) bool {
	for _, rr := range r.Answer {
		if rr.Header().Rrtype == dns.TypeOPT {
			return false
		}
	}
	for _, rr := range r.Ns {
		if rr.Header().Rrtype == dns.TypeOPT {
			return false
		}
	}
	opts := 0
	for _, rr := range r.Extra {
		if h := rr.Header(); h.Rrtype == dns.TypeOPT {
			if opts++; opts > 1 || h.Name != "." {
				return false
			}
		}
	}
	return true
}

// Requests are checked before the handler sees them (request, in
// transport.go): one the library's parser would not take whole becomes a
// stand-in the handler answers FORMERR (or NOTIMP), so that every such
// answer is the handler's, with its header (reply). The parser stops
// quietly where the data ends and ignores what follows the last record,
// so it would take a request cut short, or with octets added, for a
// whole one.

// headerLen is the length of a message's header; qrBit is QR in its
// flags.
const (
	headerLen = 12
	qrBit     = 1 << 15
)

// checkShape returns msg, or, when its records do not end exactly where
// the data does or it does not parse, a stand-in: its header (counts
// aside) and question, when that is one and whole, followed by an OPT
// record in the answer section, which ServeDNS answers FORMERR without
// OPT (ednsWellFormed), as it answers any misplaced OPT. A message
// shorter than a header is left as it is: the library drops it.
func checkShape(msg []byte) []byte {
	if len(msg) < headerLen {
		return msg
	}
	if recordsEnd(msg) && new(dns.Msg).Unpack(msg) == nil {
		return msg
	}
	qEnd := questionEnd(msg)
	b := make([]byte, 0, qEnd+len(misplacedOPT))
	b = append(append(b, msg[:qEnd]...), misplacedOPT...)
	qd := uint16(0)
	if qEnd > headerLen {
		qd = 1
	}
	binary.BigEndian.PutUint16(b[4:], qd) // QDCOUNT
	binary.BigEndian.PutUint16(b[6:], 1)  // ANCOUNT: the OPT
	binary.BigEndian.PutUint16(b[8:], 0)  // NSCOUNT
	binary.BigEndian.PutUint16(b[10:], 0) // ARCOUNT
	return b
}

// misplacedOPT is the record checkShape's stand-ins carry in their
// answer section: an empty OPT owned by the root.
var misplacedOPT = []byte{0, 0, 41, 0, 0, 0, 0, 0, 0, 0, 0}

// questionEnd is where msg's question ends when its header counts one
// and it parses whole, else headerLen.
func questionEnd(msg []byte) int {
	if binary.BigEndian.Uint16(msg[4:]) != 1 {
		return headerLen
	}
	_, off, err := dns.UnpackDomainName(msg, headerLen)
	if err != nil || off+4 > len(msg) {
		return headerLen
	}
	return off + 4
}

// recordsEnd walks the questions and records msg's header counts and
// reports whether they end exactly where the data does: false when the
// data ends before the last one or goes on after it, true when the walk
// cannot tell (a name it cannot follow, which the parser rejects). It
// allocates nothing.
func recordsEnd(msg []byte) bool {
	if len(msg) < headerLen {
		return true
	}
	count := func(at int) int { return int(binary.BigEndian.Uint16(msg[at:])) }
	off := headerLen
	for range count(4) {
		if off = skipName(msg, off); off < 0 {
			return true
		}
		if off += 4; off > len(msg) {
			return false
		}
	}
	for range count(6) + count(8) + count(10) {
		if off == len(msg) {
			return false
		}
		if off = skipName(msg, off); off < 0 || off+10 > len(msg) {
			return true
		}
		if off += 10 + int(binary.BigEndian.Uint16(msg[off+8:])); off > len(msg) {
			return true
		}
	}
	return off == len(msg)
}

// skipName returns the offset after the domain name at off, or -1 when
// it runs past the data or is not a name.
func skipName(msg []byte, off int) int {
	for off < len(msg) {
		switch c := int(msg[off]); c & 0xC0 {
		case 0x00:
			if c == 0 {
				return off + 1
			}
			off += 1 + c
		case 0xC0: // a compression pointer ends the name
			if off+2 > len(msg) {
				return -1
			}
			return off + 2
		default:
			return -1
		}
	}
	return -1
}
