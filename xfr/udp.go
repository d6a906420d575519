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

// UDP sockets that share an address (ListenUDP: what cnsd binds itself on
// Linux) are served by a worker each that reads, answers and writes its
// socket (alone): the kernel spreads the clients over them. Another socket
// is served by one reader goroutine that does nothing but
// read: each batch of datagrams read at once goes, in pooled buffers, to
// a bounded queue that workers (GOMAXPROCS of them) answer from, a batch
// each, sending its answers together (sendmmsg on Linux): a system call
// costs more than answering a query from the answer cache. A pause in
// answering — a garbage collection, a lock, a burst of slow answers —
// fills the queue and then the socket's receive buffer
// (dns.udp_receive_buffer, 4 MiB) instead of making the kernel drop
// queries. What it drops all the same
// (the buffer full) it reports with each datagram (SO_RXQ_OVFL on Linux),
// counted in UDPDropped.

const (
	// udpReadSize is the largest request read whole; a longer one is cut
	// off and answered FORMERR. Answers are at most dns.udp_max_payload,
	// which is at most 4096 too.
	udpReadSize = 4096
	// udpQueueLen is how many datagrams at most wait for a worker, in
	// batches of up to udpBatch, before the reader waits too and the
	// socket's receive buffer fills.
	udpQueueLen = 1024
	oobSize     = 128
)

// udpPacket is one datagram and the answer to it, pooled.
type udpPacket struct {
	buf    [udpReadSize]byte
	n      int
	from   netip.AddrPort
	remote *net.UDPAddr // from, when the read gave it as one
	// name is from as the kernel gave it (a sockaddr, namelen octets),
	// for the blocking reads and writes of udpblock_linux.go.
	name    [28]byte
	namelen uint32
	// oob holds the datagram's control messages (its destination
	// address, the socket's drop count); replyOOB the ones that send the
	// answer from that address.
	oob      [oobSize]byte
	oobn     int
	replyOOB [oobSize]byte
	out      []byte // room for the packed answer
	// answer is the answer to send, in out or elsewhere, nil when none
	// is; wbuf holds it for the batched write.
	answer []byte
	wbuf   [1][]byte
	// q is the request as the answer cache reads it, quick whether it
	// could, st the settings it was read with.
	q     quickQuery
	quick bool
	st    *settings
	w     udpWriter
}

var udpPackets = sync.Pool{New: func() any { return &udpPacket{out: make([]byte, 0, udpReadSize)} }}

// udpServer serves one UDP socket.
type udpServer struct {
	s    *Server
	conn *net.UDPConn
	ctl  udpControl // the platform's control messages (udpsock_*.go)
	// fd, when not nil, is the socket read with blocking system calls
	// by the one worker (udpblock_linux.go); conn is closed then.
	fd    *udpFD
	queue chan []*udpPacket
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
	return &udpServer{s: s, conn: conn, ctl: ctl, queue: make(chan []*udpPacket, udpQueueLen/udpBatch)}, nil
}

// defaultUDPBuffer is the socket buffer size when the configuration
// gives none.
const defaultUDPBuffer = 4 << 20

// run serves until the socket is closed (or stop called) with workers
// workers, then lets them finish what was read. One worker reads,
// answers and writes the socket itself (alone, or serveFD once
// detached); more take batches from a reader.
func (u *udpServer) run(workers int) {
	if workers <= 1 {
		if u.fd != nil {
			u.serveFD(u.fd)
			return
		}
		u.alone()
		return
	}
	var wg sync.WaitGroup
	for range workers {
		wg.Go(u.work)
	}
	u.read()
	close(u.queue)
	wg.Wait()
}

// read reads datagrams into the queue until the socket is closed, as
// many at once as are waiting, up to udpBatch (recvmmsg on Linux), and
// hands each batch read to one worker, which answers it with one write
// (sendmmsg on Linux).
func (u *udpServer) read() {
	ps := getPackets()
	defer putPackets(ps)
	for {
		n, open := u.readBatch(ps)
		if !open {
			return
		}
		batch := make([]*udpPacket, n)
		for i, p := range ps[:n] {
			u.countDrops(p)
			batch[i] = p
			ps[i] = udpPackets.Get().(*udpPacket)
		}
		u.queue <- batch
	}
}

// readBatch reads into ps as many datagrams as are waiting, at least
// one; open is false once the socket is closed.
func (u *udpServer) readBatch(ps []*udpPacket) (n int, open bool) {
	for {
		if h := u.s.udpReadHook; h != nil {
			h()
		}
		n, err := u.ctl.read(u.conn, ps)
		if err == nil {
			return n, true
		}
		if errors.Is(err, net.ErrClosed) {
			return 0, false
		}
		// An ICMP error reported on the socket, say: read again.
	}
}

// getPackets takes from the pool the packets one read fills.
func getPackets() []*udpPacket {
	ps := make([]*udpPacket, udpBatch)
	for i := range ps {
		ps[i] = udpPackets.Get().(*udpPacket)
	}
	return ps
}

// putPackets gives ps back to the pool.
func putPackets(ps []*udpPacket) {
	for _, p := range ps {
		udpPackets.Put(p)
	}
}

// alone serves the socket with one goroutine, the socket one of several
// sharing an address (ListenUDP), each with a worker of its own: it reads
// a batch, answers it and sends the answers, then reads again. A pause
// in answering fills this socket's receive buffer, as the reader's queue
// would have filled; it is as large as a lone socket's.
func (u *udpServer) alone() {
	ps := getPackets()
	defer putPackets(ps)
	var w udpBatchWriter
	var nw nameWriter
	for {
		n, open := u.readBatch(ps)
		if !open {
			return
		}
		batch := ps[:n]
		for _, p := range batch {
			u.countDrops(p)
			u.serve(p, &nw)
		}
		u.ctl.write(u.conn, &w, batch)
		for _, p := range batch {
			p.answer, p.wbuf[0], p.st, p.remote = nil, nil, nil, nil
		}
	}
}

// stop ends the serving of a detached socket; closing conn ends the
// others'.
func (u *udpServer) stop() {
	if u.fd != nil {
		u.fd.stop()
	}
}

// countDrops adds to the server's count the datagrams the kernel dropped
// since the socket's last report, when p carries one.
func (u *udpServer) countDrops(p *udpPacket) {
	if d, ok := u.ctl.drops(p.oob[:p.oobn]); ok && d != u.drops {
		u.s.udpDropped.Add(uint64(d - u.drops)) // the kernel's counter wraps at 2^32
		u.drops = d
	}
}

// udpBatch is the most datagrams read with one system call.
const udpBatch = 32

func (u *udpServer) work() {
	var w udpBatchWriter
	var nw nameWriter
	for batch := range u.queue {
		for _, p := range batch {
			u.serve(p, &nw)
		}
		u.ctl.write(u.conn, &w, batch)
		for _, p := range batch {
			p.answer, p.wbuf[0], p.st, p.remote = nil, nil, nil, nil
			udpPackets.Put(p)
		}
	}
}

// serve answers one datagram: from the answer cache when it holds the
// answer, else written from the records when answerWire can (with nw,
// the worker's), else through ServeDNS. The answer is left in p.answer.
func (u *udpServer) serve(p *udpPacket, nw *nameWriter) {
	msg := p.buf[:p.n]
	p.st = u.s.settings()
	p.quick = p.st.parseQuick(msg, 0, &p.q)
	if p.quick && (u.fast(p) || u.wire(p, nw)) {
		return
	}
	r, raw := request(msg)
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
	p.w = udpWriter{}
}

// fast answers p from the answer cache, and reports whether it held the
// answer. The answer counts as the full path counts it, and passes rate
// limiting the same way.
func (u *udpServer) fast(p *udpPacket) bool {
	msg := p.buf[:p.n]
	ans, rcode, ok := u.s.cached(p.st, &p.q, msg, p.out[:0])
	if !ok {
		return false
	}
	u.place(p, msg, ans, rcode)
	return true
}

// place counts an answer made without the full path and sets it as p's
// answer as rate limiting lets it go: whole, slipped or not at all. It
// reports whether it went whole.
func (u *udpServer) place(p *udpPacket, msg, ans []byte, rcode int) bool {
	u.s.countQuery(rcode)
	switch u.s.limitVerdict(p.from.Addr().Unmap(), rcode) {
	case send:
		p.answer = ans
		return true
	case slip:
		p.answer = slipAnswer(msg, &p.q, p.out[:0])
	}
	return false
}

// wire answers p written straight from the records (answerWire), and
// reports whether it could. It counts, rate-limits and caches the answer
// as the full path does for the same request.
func (u *udpServer) wire(p *udpPacket, nw *nameWriter) bool {
	msg := p.buf[:p.n]
	ans, z, qname, rcode, ok := u.s.answerWire(p.st, &p.q, msg, p.out[:0], nw)
	if !ok {
		return false
	}
	if u.place(p, msg, ans, rcode) {
		p.st.rememberWire(&p.q, ans, z, qname, rcode)
	}
	return true
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
	buf := w.p.out[:cap(w.p.out)]
	if w.p.answer != nil {
		buf = nil // out holds the answer still to be sent
	}
	b, err := w.tsig.pack(m, buf)
	if err != nil {
		return err
	}
	_, err = w.Write(b)
	return err
}

// Write leaves b to be sent with the other answers of the batch, or
// sends it at once when an answer is already waiting (which a query's
// answer never finds).
func (w *udpWriter) Write(b []byte) (int, error) {
	if w.p.answer == nil {
		w.p.answer = b
		return len(b), nil
	}
	if w.u.fd != nil {
		return w.u.fd.writeNow(w.u.ctl, w.p, b)
	}
	oob := w.u.ctl.reply(w.p.oob[:w.p.oobn], w.p.replyOOB[:0])
	n, _, err := w.u.conn.WriteMsgUDPAddrPort(b, oob, w.p.from)
	return n, err
}

// fill gives the answer cache the request and its answer, when the
// cache could read the request with the settings st.
func (w *udpWriter) fill(st *settings) (*quickQuery, []byte) {
	if !w.p.quick || w.p.st != st {
		return nil, nil
	}
	return &w.p.q, w.p.answer
}
