package xfr

import (
	"encoding/binary"
	"net"
	"time"

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

// checkedReader reads requests as miekg/dns does and hands on a request
// whose records do not match its header counts in a form the library
// rejects. The library's parser stops quietly where the data ends and
// ignores what follows the last record, so it would take a request cut
// short, or with octets added, for a whole one.
type checkedReader struct{ dns.PacketConnReader }

// checkRequests is the servers' dns.DecorateReader.
func checkRequests(r dns.Reader) dns.Reader {
	if pr, ok := r.(dns.PacketConnReader); ok {
		return checkedReader{pr}
	}
	return r
}

func (c checkedReader) ReadTCP(conn net.Conn, timeout time.Duration) ([]byte, error) {
	b, err := c.PacketConnReader.ReadTCP(conn, timeout)
	return checkShape(b), err
}

func (c checkedReader) ReadUDP(conn *net.UDPConn, timeout time.Duration) ([]byte, *dns.SessionUDP, error) {
	b, s, err := c.PacketConnReader.ReadUDP(conn, timeout)
	return checkShape(b), s, err
}

func (c checkedReader) ReadPacketConn(conn net.PacketConn, timeout time.Duration) ([]byte, net.Addr, error) {
	b, a, err := c.PacketConnReader.ReadPacketConn(conn, timeout)
	return checkShape(b), a, err
}

// headerLen is the length of a message's header.
const headerLen = 12

// checkShape returns msg, or, when its records do not end exactly where
// the data does, a message the library's parser rejects, so that it
// answers FORMERR: the header and question followed by one octet the
// header counts as an additional record — the parser keeps the
// question and fails on the record — or, when the question itself is
// cut short (which the parser would take with type and class 0), the
// header followed by half a name. A message the walk cannot follow (a
// bad name) is left as it is: the parser rejects that itself.
func checkShape(msg []byte) []byte {
	qEnd, ok := recordsEnd(msg)
	if ok {
		return msg
	}
	tail, additional := byte(0), uint16(1)
	if qEnd == headerLen && binary.BigEndian.Uint16(msg[4:]) > 0 {
		tail, additional = 0xC0, 0 // a compression pointer without its second octet
	}
	b := append(msg[:qEnd], tail)
	binary.BigEndian.PutUint16(b[6:], 0)           // ANCOUNT
	binary.BigEndian.PutUint16(b[8:], 0)           // NSCOUNT
	binary.BigEndian.PutUint16(b[10:], additional) // ARCOUNT
	return b
}

// recordsEnd walks the questions and records msg's header counts. ok is
// false when the data ends before the last one or goes on after it;
// qEnd is then where the questions end, or headerLen when they are cut
// short. It allocates nothing.
func recordsEnd(msg []byte) (qEnd int, ok bool) {
	if len(msg) < headerLen {
		return 0, true
	}
	count := func(at int) int { return int(binary.BigEndian.Uint16(msg[at:])) }
	off := headerLen
	for range count(4) {
		if off = skipName(msg, off); off < 0 {
			return 0, true
		}
		if off += 4; off > len(msg) {
			return headerLen, false
		}
	}
	qEnd = off
	for range count(6) + count(8) + count(10) {
		if off == len(msg) {
			return qEnd, false
		}
		if off = skipName(msg, off); off < 0 || off+10 > len(msg) {
			return 0, true
		}
		if off += 10 + int(binary.BigEndian.Uint16(msg[off+8:])); off > len(msg) {
			return 0, true
		}
	}
	return qEnd, off == len(msg)
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
