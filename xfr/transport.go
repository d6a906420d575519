package xfr

import (
	"encoding/binary"

	"github.com/miekg/dns"
)

// cnsd reads and writes its DNS sockets itself (udp.go, tcp.go) and
// uses miekg/dns for messages only: parsing, packing, TSIG. Both
// transports hand each request to ServeDNS through a dns.ResponseWriter,
// as the library's server did, so that the handler does not know which
// loop serves it.

// request parses one request as read from a socket, or returns nil when
// it is not answered: shorter than a header, or a response (QR set). A
// request the parser would not take whole becomes checkShape's stand-in,
// which ServeDNS answers FORMERR; raw is what was parsed, which a TSIG
// signature is checked against.
func request(b []byte) (r *dns.Msg, raw []byte) {
	if len(b) < headerLen || binary.BigEndian.Uint16(b[2:])&qrBit != 0 {
		return nil, nil
	}
	r = new(dns.Msg)
	if recordsEnd(b) && r.Unpack(b) == nil {
		return r, b // what checkShape passes on as it is, parsed once
	}
	raw = checkShape(b)
	r = new(dns.Msg)
	if err := r.Unpack(raw); err != nil {
		return nil, nil // checkShape's stand-ins parse; not reached
	}
	return r, raw
}

// tsigState is the TSIG state of the answer to one request: whether the
// request's signature verified, and the MAC the next signed message
// covers (the request's, then each message's in turn, RFC 8945 §5.3.1).
type tsigState struct {
	provider   dns.TsigProvider
	status     error
	requestMAC string
	timersOnly bool
}

// verify checks the signature of raw, the request r as read, when it
// has one.
func (t *tsigState) verify(p dns.TsigProvider, raw []byte, r *dns.Msg) {
	t.provider = p
	if rr := r.IsTsig(); rr != nil {
		t.status = dns.TsigVerifyWithProvider(raw, p, "", false)
		t.requestMAC = rr.MAC
	}
}

// pack packs m into buf (grown when too small), signed when it carries a
// TSIG record.
func (t *tsigState) pack(m *dns.Msg, buf []byte) ([]byte, error) {
	if t.provider != nil && m.IsTsig() != nil {
		b, mac, err := dns.TsigGenerateWithProvider(m, t.provider, t.requestMAC, t.timersOnly)
		if err != nil {
			return nil, err
		}
		t.requestMAC = mac
		return b, nil
	}
	return m.PackBuffer(buf)
}

// TransportCounts are the figures of the DNS sockets.
type TransportCounts struct {
	// UDPDropped is the queries the kernel dropped since start, a UDP
	// socket's receive buffer full (Linux only; 0 elsewhere).
	UDPDropped uint64
	// TCPConnections is the TCP connections open now; TCPEvicted those
	// closed since start to make room for a new one over a cap.
	TCPConnections int
	TCPEvicted     uint64
}

// TransportCounts returns the figures of the DNS sockets.
func (s *Server) TransportCounts() TransportCounts {
	c := TransportCounts{UDPDropped: s.udpDropped.Load()}
	if t := s.tcp.Load(); t != nil {
		t.mu.Lock()
		c.TCPConnections = len(t.conns)
		t.mu.Unlock()
		c.TCPEvicted = t.evicted.Load()
	}
	return c
}
