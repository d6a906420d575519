//go:build linux

package xfr

import (
	"encoding/binary"
	"net"
	"net/netip"
	"syscall"
	"unsafe"

	"golang.org/x/net/ipv4"
	"golang.org/x/net/ipv6"
	"golang.org/x/sys/unix"
)

// setBuffers asks for socket buffers of rcv and snd octets, beyond
// net.core.rmem_max and wmem_max when the process may (SO_RCVBUFFORCE
// needs CAP_NET_ADMIN), and returns what the kernel granted: half of
// what getsockopt reports, since Linux doubles the value for its
// bookkeeping.
func setBuffers(conn *net.UDPConn, rcv, snd int) (gotRcv, gotSnd int, err error) {
	rc, err := conn.SyscallConn()
	if err != nil {
		return 0, 0, err
	}
	cerr := rc.Control(func(fd uintptr) {
		s := int(fd)
		if syscall.SetsockoptInt(s, syscall.SOL_SOCKET, syscall.SO_RCVBUFFORCE, rcv) != nil {
			err = syscall.SetsockoptInt(s, syscall.SOL_SOCKET, syscall.SO_RCVBUF, rcv)
		}
		if syscall.SetsockoptInt(s, syscall.SOL_SOCKET, syscall.SO_SNDBUFFORCE, snd) != nil {
			if serr := syscall.SetsockoptInt(s, syscall.SOL_SOCKET, syscall.SO_SNDBUF, snd); err == nil {
				err = serr
			}
		}
		v, gerr := syscall.GetsockoptInt(s, syscall.SOL_SOCKET, syscall.SO_RCVBUF)
		if gerr == nil {
			gotRcv = v / 2
		}
		if v, gerr = syscall.GetsockoptInt(s, syscall.SOL_SOCKET, syscall.SO_SNDBUF); gerr == nil {
			gotSnd = v / 2
		}
	})
	if cerr != nil {
		return 0, 0, cerr
	}
	return gotRcv, gotSnd, err
}

// udpControl reads the control messages Linux attaches to each datagram:
// the socket's drop count (SO_RXQ_OVFL) and, on a socket bound to the
// unspecified address, the address the datagram was sent to, which the
// answer must come from (IP_PKTINFO, IPV6_PKTINFO).
type udpControl struct {
	pktinfo bool
	batch   *batchReader
}

// batchReader reads datagrams with recvmmsg. msgs and bufs are the
// reader goroutine's alone.
type batchReader struct {
	v4   *ipv4.PacketConn
	v6   *ipv6.PacketConn
	msgs []ipv4.Message // ipv4.Message and ipv6.Message are one type
	bufs [][1][]byte
}

// read reads as many datagrams as are waiting, at least one, up to
// len(ps), into ps.
func (c udpControl) read(_ *net.UDPConn, ps []*udpPacket) (int, error) {
	b := c.batch
	ps = ps[:min(len(ps), len(b.msgs))]
	for i, p := range ps {
		b.bufs[i][0] = p.buf[:]
		b.msgs[i] = ipv4.Message{Buffers: b.bufs[i][:], OOB: p.oob[:]}
	}
	var n int
	var err error
	if b.v4 != nil {
		n, err = b.v4.ReadBatch(b.msgs[:len(ps)], 0)
	} else {
		n, err = b.v6.ReadBatch(b.msgs[:len(ps)], 0)
	}
	if err != nil {
		return 0, err
	}
	for i, p := range ps[:n] {
		m := &b.msgs[i]
		p.n, p.oobn = m.N, m.NN
		if ua, ok := m.Addr.(*net.UDPAddr); ok {
			p.remote, p.from = ua, ua.AddrPort()
		}
		b.bufs[i][0], m.Buffers, m.OOB, m.Addr = nil, nil, nil, nil
	}
	return n, nil
}

func newControl(conn *net.UDPConn) (udpControl, error) {
	c := udpControl{batch: &batchReader{msgs: make([]ipv4.Message, udpBatch), bufs: make([][1][]byte, udpBatch)}}
	a, _ := conn.LocalAddr().(*net.UDPAddr)
	if a != nil && a.IP.IsUnspecified() {
		c.pktinfo = true
	}
	if a != nil && a.IP.To4() != nil {
		c.batch.v4 = ipv4.NewPacketConn(conn)
	} else {
		c.batch.v6 = ipv6.NewPacketConn(conn)
	}
	rc, err := conn.SyscallConn()
	if err != nil {
		return c, err
	}
	var serr error
	err = rc.Control(func(fd uintptr) {
		s := int(fd)
		serr = syscall.SetsockoptInt(s, syscall.SOL_SOCKET, syscall.SO_RXQ_OVFL, 1)
		if c.pktinfo {
			// One of the two fails, on a socket of the other family.
			e4 := syscall.SetsockoptInt(s, syscall.IPPROTO_IP, syscall.IP_PKTINFO, 1)
			e6 := syscall.SetsockoptInt(s, syscall.IPPROTO_IPV6, syscall.IPV6_RECVPKTINFO, 1)
			if e4 != nil && e6 != nil {
				serr = e4
			}
		}
	})
	if err == nil {
		err = serr
	}
	return c, err
}

// cmsgs calls f with the level, type and data of each control message in
// oob, until f returns false.
func cmsgs(oob []byte, f func(level, typ int32, data []byte) bool) {
	const hdr = syscall.SizeofCmsghdr
	for len(oob) >= hdr {
		var n uint64
		if hdr == 16 { // Len is a size_t
			n = binary.NativeEndian.Uint64(oob)
		} else {
			n = uint64(binary.NativeEndian.Uint32(oob))
		}
		if n < hdr || n > uint64(len(oob)) {
			return
		}
		level := int32(binary.NativeEndian.Uint32(oob[hdr-8:]))
		typ := int32(binary.NativeEndian.Uint32(oob[hdr-4:]))
		if !f(level, typ, oob[hdr:n]) {
			return
		}
		oob = oob[min(cmsgAlign(int(n)), len(oob)):]
	}
}

func cmsgAlign(n int) int {
	const word = int(unsafe.Sizeof(uintptr(0)))
	return (n + word - 1) &^ (word - 1)
}

// drops returns the socket's drop count when oob carries it: the
// datagrams the kernel dropped since the socket was opened, the receive
// buffer full.
func (udpControl) drops(oob []byte) (n uint32, ok bool) {
	cmsgs(oob, func(level, typ int32, data []byte) bool {
		if level == syscall.SOL_SOCKET && typ == syscall.SO_RXQ_OVFL && len(data) >= 4 {
			n, ok = binary.NativeEndian.Uint32(data), true
			return false
		}
		return true
	})
	return n, ok
}

// reply appends to out the control message that sends an answer from
// the address the request (with control messages oob) was sent to; out
// stays empty when the socket is bound to one address.
func (c udpControl) reply(oob, out []byte) []byte {
	if !c.pktinfo {
		return out
	}
	var dst netip.Addr
	cmsgs(oob, func(level, typ int32, data []byte) bool {
		switch {
		case level == syscall.IPPROTO_IP && typ == syscall.IP_PKTINFO && len(data) >= syscall.SizeofInet4Pktinfo:
			dst = netip.AddrFrom4([4]byte(data[8:12])) // ipi_addr, the header's destination
		case level == syscall.IPPROTO_IPV6 && typ == syscall.IPV6_PKTINFO && len(data) >= syscall.SizeofInet6Pktinfo:
			dst = netip.AddrFrom16([16]byte(data[:16]))
		default:
			return true
		}
		return false
	})
	switch {
	case dst.Is4():
		// in_pktinfo: ifindex 0, ipi_spec_dst the source to use.
		var pi [syscall.SizeofInet4Pktinfo]byte
		a := dst.As4()
		copy(pi[4:8], a[:])
		return appendCmsg(out, syscall.IPPROTO_IP, syscall.IP_PKTINFO, pi[:])
	case dst.Is6():
		var pi [syscall.SizeofInet6Pktinfo]byte
		a := dst.As16()
		copy(pi[:16], a[:])
		return appendCmsg(out, syscall.IPPROTO_IPV6, syscall.IPV6_PKTINFO, pi[:])
	}
	return out
}

func appendCmsg(out []byte, level, typ int32, data []byte) []byte {
	const hdr = syscall.SizeofCmsghdr
	n := hdr + len(data)
	start := len(out)
	out = append(out, make([]byte, cmsgAlign(n))...)
	b := out[start:]
	if hdr == 16 {
		binary.NativeEndian.PutUint64(b, uint64(n))
	} else {
		binary.NativeEndian.PutUint32(b, uint32(n))
	}
	binary.NativeEndian.PutUint32(b[hdr-8:], uint32(level))
	binary.NativeEndian.PutUint32(b[hdr-4:], uint32(typ))
	copy(b[hdr:], data)
	return out
}

// udpBatchWriter is one worker's room for a batched write.
type udpBatchWriter struct {
	msgs []ipv4.Message
}

// write sends the answers of ps, each from the address its request was
// sent to, with as few sendmmsg calls as the kernel takes them in. A
// datagram the kernel refuses is skipped, as a failed sendmsg was.
func (c udpControl) write(_ *net.UDPConn, w *udpBatchWriter, ps []*udpPacket) {
	msgs := w.msgs[:0]
	for _, p := range ps {
		if p.answer == nil {
			continue
		}
		p.wbuf[0] = p.answer
		var addr net.Addr = p.remote
		if p.remote == nil {
			addr = net.UDPAddrFromAddrPort(p.from)
		}
		msgs = append(msgs, ipv4.Message{Buffers: p.wbuf[:], OOB: c.reply(p.oob[:p.oobn], p.replyOOB[:0]), Addr: addr})
	}
	w.msgs = msgs[:0]
	for len(msgs) > 0 {
		var n int
		var err error
		if c.batch.v4 != nil {
			n, err = c.batch.v4.WriteBatch(msgs, 0)
		} else {
			n, err = c.batch.v6.WriteBatch(msgs, 0)
		}
		if err != nil {
			n = max(n, 1)
		}
		msgs = msgs[min(n, len(msgs)):]
	}
	clear(w.msgs[:cap(w.msgs)])
}

// reusePortSpreads says that the kernel spreads datagrams over the
// sockets sharing an address (Linux 3.9 and later, by a hash of the
// sender's address and port).
const reusePortSpreads = true

// reusePort lets the socket share its address with others of the same
// user (SO_REUSEPORT), for net.ListenConfig.
func reusePort(_, _ string, c syscall.RawConn) error {
	var serr error
	if err := c.Control(func(fd uintptr) {
		serr = syscall.SetsockoptInt(int(fd), syscall.SOL_SOCKET, unix.SO_REUSEPORT, 1)
	}); err != nil {
		return err
	}
	return serr
}
