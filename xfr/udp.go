package xfr

import (
	"context"
	"errors"
	"log/slog"
	"net"
	"net/netip"
	"sync"

	"github.com/miekg/dns"
)

// UDP is served by one reader goroutine per socket that does nothing but
// read: each datagram goes, in a pooled buffer, to a bounded queue that
// workers (GOMAXPROCS of them) answer from. A pause in answering — a
// garbage collection, a lock, a burst of slow answers — fills the queue
// and then the socket's receive buffer (dns.udp_receive_buffer, 4 MiB)
// instead of making the kernel drop queries. What it drops all the same
// (the buffer full) it reports with each datagram (SO_RXQ_OVFL on Linux),
// counted in UDPDropped.

const (
	// udpReadSize is the largest request read whole; a longer one is cut
	// off and answered FORMERR. Answers are at most dns.udp_max_payload,
	// which is at most 4096 too.
	udpReadSize = 4096
	// udpQueueLen is how many datagrams wait for a worker before the
	// reader waits too, and the socket's receive buffer fills.
	udpQueueLen = 1024
	oobSize     = 128
)

// udpPacket is one datagram and the answer to it, pooled.
type udpPacket struct {
	buf    [udpReadSize]byte
	n      int
	from   netip.AddrPort
	remote *net.UDPAddr // from, when the read gave it as one
	// oob holds the datagram's control messages (its destination
	// address, the socket's drop count); replyOOB the ones that send the
	// answer from that address.
	oob      [oobSize]byte
	oobn     int
	replyOOB [oobSize]byte
	out      []byte // the packed answer
	w        udpWriter
}

var udpPackets = sync.Pool{New: func() any { return &udpPacket{out: make([]byte, 0, udpReadSize)} }}

// udpServer serves one UDP socket.
type udpServer struct {
	s     *Server
	conn  *net.UDPConn
	ctl   udpControl // the platform's control messages (udpsock_*.go)
	queue chan *udpPacket
	// drops is the socket's drop count last reported; the reader's
	// alone.
	drops uint32
}

// newUDP prepares pc to be served: socket buffers sized as configured
// (and logged as granted) and control messages enabled.
func (s *Server) newUDP(pc net.PacketConn) (*udpServer, error) {
	conn, ok := pc.(*net.UDPConn)
	if !ok {
		return nil, errors.New("not a UDP socket")
	}
	d := s.settings().cfg.DNS
	rcv, snd := d.UDPReceiveBuffer, d.UDPSendBuffer
	if rcv <= 0 {
		rcv = defaultUDPBuffer
	}
	if snd <= 0 {
		snd = defaultUDPBuffer
	}
	gotRcv, gotSnd, err := setBuffers(conn, rcv, snd)
	if err != nil {
		s.log.Warn("cannot size the UDP socket buffers", "addr", conn.LocalAddr().String(), "err", err)
	}
	level := slog.LevelInfo
	if gotRcv < rcv || gotSnd < snd {
		level = slog.LevelWarn // raise net.core.rmem_max / wmem_max, or run as root
	}
	s.log.Log(context.Background(), level, "UDP socket buffers", "addr", conn.LocalAddr().String(),
		"receive_requested", rcv, "receive_granted", gotRcv, "send_requested", snd, "send_granted", gotSnd)
	ctl, err := newControl(conn)
	if err != nil {
		return nil, err
	}
	return &udpServer{s: s, conn: conn, ctl: ctl, queue: make(chan *udpPacket, udpQueueLen)}, nil
}

// defaultUDPBuffer is the socket buffer size when the configuration
// gives none.
const defaultUDPBuffer = 4 << 20

// run serves until the socket is closed, then lets the workers finish
// what was read.
func (u *udpServer) run(workers int) {
	var wg sync.WaitGroup
	for range workers {
		wg.Go(u.work)
	}
	u.read()
	close(u.queue)
	wg.Wait()
}

// read reads datagrams into the queue until the socket is closed, as
// many at once as are waiting, up to udpBatch (recvmmsg on Linux).
func (u *udpServer) read() {
	ps := make([]*udpPacket, udpBatch)
	for i := range ps {
		ps[i] = udpPackets.Get().(*udpPacket)
	}
	defer func() {
		for _, p := range ps {
			udpPackets.Put(p)
		}
	}()
	for {
		if h := u.s.udpReadHook; h != nil {
			h()
		}
		n, err := u.ctl.read(u.conn, ps)
		if err != nil {
			if errors.Is(err, net.ErrClosed) {
				return
			}
			continue // an ICMP error reported on the socket, say
		}
		for i, p := range ps[:n] {
			if d, ok := u.ctl.drops(p.oob[:p.oobn]); ok && d != u.drops {
				u.s.udpDropped.Add(uint64(d - u.drops)) // the kernel's counter wraps at 2^32
				u.drops = d
			}
			u.queue <- p
			ps[i] = udpPackets.Get().(*udpPacket)
		}
	}
}

// udpBatch is the most datagrams read with one system call.
const udpBatch = 32

func (u *udpServer) work() {
	for p := range u.queue {
		u.serve(p)
		udpPackets.Put(p)
	}
}

// serve answers one datagram.
func (u *udpServer) serve(p *udpPacket) {
	r, raw := request(p.buf[:p.n])
	if r == nil {
		return
	}
	remote := p.remote
	if remote == nil {
		remote = net.UDPAddrFromAddrPort(p.from)
	}
	p.w = udpWriter{u: u, p: p, remote: remote}
	p.w.tsig.verify(tsigProvider{u.s}, raw, r)
	u.s.ServeDNS(&p.w, r)
	p.w, p.remote = udpWriter{}, nil
}

// udpWriter is the dns.ResponseWriter of one UDP request.
type udpWriter struct {
	u      *udpServer
	p      *udpPacket
	remote *net.UDPAddr
	tsig   tsigState
}

var _ dns.ResponseWriter = (*udpWriter)(nil)

func (w *udpWriter) LocalAddr() net.Addr  { return w.u.conn.LocalAddr() }
func (w *udpWriter) RemoteAddr() net.Addr { return w.remote }
func (w *udpWriter) TsigStatus() error    { return w.tsig.status }
func (w *udpWriter) TsigTimersOnly(b bool) {
	w.tsig.timersOnly = b
}
func (w *udpWriter) Close() error { return nil }
func (w *udpWriter) Hijack()      {}

func (w *udpWriter) WriteMsg(m *dns.Msg) error {
	b, err := w.tsig.pack(m, w.p.out[:cap(w.p.out)])
	if err != nil {
		return err
	}
	_, err = w.Write(b)
	return err
}

// Write sends b to the client from the address the request came to.
func (w *udpWriter) Write(b []byte) (int, error) {
	oob := w.u.ctl.reply(w.p.oob[:w.p.oobn], w.p.replyOOB[:0])
	n, _, err := w.u.conn.WriteMsgUDPAddrPort(b, oob, w.p.from)
	return n, err
}
