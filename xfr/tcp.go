package xfr

import (
	"bufio"
	"encoding/binary"
	"errors"
	"io"
	"net"
	"net/netip"
	"sync"
	"sync/atomic"
	"time"

	"github.com/miekg/dns"
)

// DNS over TCP as RFC 7766 asks of a server:
//
//   - a connection stays open until the client closes it, or it has had
//     no query in progress for dns.tcp_idle_timeout_seconds (§6.2.3); a
//     query that asks (edns-tcp-keepalive, RFC 7828) is told that
//     timeout in its answer;
//   - queries pipelined on a connection are answered concurrently, up
//     to tcpInFlight at once, each as soon as it is ready, so answers
//     may leave in another order than the queries came (§6.2.1.1, §7);
//     one the answer cache holds is answered by the reading goroutine
//     before it reads on, and those answers leave together in one write
//     before it waits for more;
//   - no limit on the queries of a connection unless
//     dns.tcp_max_queries sets one, and then every query read before
//     the limit is answered before the connection closes;
//   - dns.tcp_max_connections and dns.tcp_max_connections_per_client
//     cap the connections open at once; a new connection beyond a cap
//     closes the one idle longest (§6.2.2 leaves the policy to the
//     server) instead of being refused.
//
// A transfer's messages (AXFR, IXFR) leave in order and nothing else is
// written on the connection between them: the transfer holds the
// connection's write lock from its first message to its last. Every
// write has a deadline, so a client that stops reading loses its
// connection and holds up nothing else.

// tcpInFlight is how many queries of one connection are answered at
// once; the connection is not read while that many are in progress.
const tcpInFlight = 32

// defaultTCPWriteTimeout bounds each write to a TCP client
// (Options.TCPWriteTimeout).
const defaultTCPWriteTimeout = 30 * time.Second

// tcpConn is one client connection.
type tcpConn struct {
	s      *Server
	c      net.Conn
	client netip.Addr
	remote net.Addr
	// last is when the connection last read a query or wrote an answer,
	// in Unix nanoseconds; inFlight the queries read and not yet
	// answered.
	last     atomic.Int64
	inFlight atomic.Int32
	// closing is set when the connection is to stop reading: evicted,
	// or the server shutting down.
	closing atomic.Bool
	// wmu serialises writes, so that one answer's octets never mix with
	// another's; a transfer holds it from its first message to its
	// last.
	wmu  sync.Mutex
	slot chan struct{} // capacity tcpInFlight: a query in progress holds one
	wg   sync.WaitGroup
	// q, hit and nw are the reading goroutine's room for answers from
	// the answer cache or written from the records; pending holds the
	// answers it has not yet written (length-prefixed), sent together
	// before it next waits to read.
	q        quickQuery
	hit      []byte
	nw       nameWriter
	pending  []byte
	pendingN int // answers in pending
}

// tcpPendingMax is how many octets of answers from the cache the reading
// goroutine gathers before it writes them, when more queries are already
// read: one write for many pipelined answers.
const tcpPendingMax = 16 << 10

// tcpServer serves the connections of every listener and keeps the
// caps on them. mu guards conns and perClient.
type tcpServer struct {
	s         *Server
	mu        sync.Mutex
	conns     map[*tcpConn]struct{}
	perClient map[netip.Addr]int
	wg        sync.WaitGroup // one per connection
	// evicted counts the connections closed to make room for others.
	evicted atomic.Uint64
}

func newTCPServer(s *Server) *tcpServer {
	return &tcpServer{s: s, conns: map[*tcpConn]struct{}{}, perClient: map[netip.Addr]int{}}
}

// serve accepts connections on l until it is closed.
func (t *tcpServer) serve(l net.Listener) error {
	for {
		c, err := l.Accept()
		if err != nil {
			if errors.Is(err, net.ErrClosed) {
				return nil
			}
			var ne net.Error
			if errors.As(err, &ne) && ne.Timeout() || isTemporary(err) {
				time.Sleep(10 * time.Millisecond) // out of file descriptors, say
				continue
			}
			return err
		}
		tc := &tcpConn{s: t.s, c: c, remote: c.RemoteAddr(), slot: make(chan struct{}, tcpInFlight)}
		if ap, err := netip.ParseAddrPort(c.RemoteAddr().String()); err == nil {
			tc.client = ap.Addr().Unmap()
		}
		tc.last.Store(time.Now().UnixNano())
		t.admit(tc)
		t.wg.Go(func() {
			tc.run()
			t.remove(tc)
		})
	}
}

func isTemporary(err error) bool {
	var te interface{ Temporary() bool }
	return errors.As(err, &te) && te.Temporary()
}

// admit adds c, first closing the connection idle longest when c would
// go over a cap: that client's when c would take it over the
// per-client cap, any one when over the total cap.
func (t *tcpServer) admit(c *tcpConn) {
	d := t.s.settings().cfg.DNS
	t.mu.Lock()
	defer t.mu.Unlock()
	if n := d.TCPMaxConnectionsPerClient; n > 0 && t.perClient[c.client] >= n {
		t.evictLocked(func(o *tcpConn) bool { return o.client == c.client })
	}
	if n := d.TCPMaxConnections; n > 0 && len(t.conns) >= n {
		t.evictLocked(func(*tcpConn) bool { return true })
	}
	t.conns[c] = struct{}{}
	t.perClient[c.client]++
}

// evictLocked stops the connection among those match selects that has
// been idle longest, preferring one with no query in progress, and
// forgets it.
func (t *tcpServer) evictLocked(match func(*tcpConn) bool) {
	var victim *tcpConn
	better := func(o *tcpConn) bool {
		if victim == nil {
			return true
		}
		oi, vi := o.inFlight.Load() == 0, victim.inFlight.Load() == 0
		if oi != vi {
			return oi
		}
		return o.last.Load() < victim.last.Load()
	}
	for o := range t.conns {
		if match(o) && better(o) {
			victim = o
		}
	}
	if victim == nil {
		return
	}
	t.removeLocked(victim)
	t.evicted.Add(1)
	victim.stop()
}

func (t *tcpServer) remove(c *tcpConn) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.removeLocked(c)
}

func (t *tcpServer) removeLocked(c *tcpConn) {
	if _, ok := t.conns[c]; !ok {
		return
	}
	delete(t.conns, c)
	if t.perClient[c.client]--; t.perClient[c.client] <= 0 {
		delete(t.perClient, c.client)
	}
}

// shutdown stops every connection reading; each closes once its queries
// are answered.
func (t *tcpServer) shutdown() {
	t.mu.Lock()
	defer t.mu.Unlock()
	for c := range t.conns {
		c.stop()
	}
}

// closeAll closes every connection at once, answered or not.
func (t *tcpServer) closeAll() {
	t.mu.Lock()
	defer t.mu.Unlock()
	for c := range t.conns {
		c.c.Close()
	}
}

// stop makes the connection stop reading; it closes once the queries it
// read are answered.
func (c *tcpConn) stop() {
	c.closing.Store(true)
	_ = c.c.SetReadDeadline(time.Now())
}

// run reads queries until the client closes the connection, it is idle
// too long, it reached its query cap or it is stopped; answers the
// queries read, and closes it.
func (c *tcpConn) run() {
	defer c.c.Close()
	defer c.wg.Wait()
	defer c.flush()
	d := c.s.settings().cfg.DNS
	idle := d.TCPIdleTimeout
	if idle <= 0 {
		idle = 10 * time.Second
	}
	br := bufio.NewReaderSize(c.c, 4096)
	for n := 0; d.TCPMaxQueries <= 0 || n < d.TCPMaxQueries; n++ {
		msg, buffered := bufferedMsg(br)
		if !buffered {
			// The next query is not all here: what is answered goes out
			// before the connection waits for it.
			c.flush()
			var err error
			if msg, err = c.readMsg(br, idle); err != nil {
				return
			}
		}
		if c.answerCached(msg) {
			if buffered {
				_, _ = br.Discard(2 + len(msg))
			}
			continue
		}
		if buffered {
			msg = append([]byte(nil), msg...) // the buffer is read over; the answer comes later
			_, _ = br.Discard(2 + len(msg))
		}
		if len(c.slot) == cap(c.slot) {
			c.flush() // before waiting for a query in progress to finish
		}
		c.slot <- struct{}{}
		c.inFlight.Add(1)
		c.last.Store(time.Now().UnixNano())
		c.wg.Go(func() {
			c.serve(msg, idle)
			c.last.Store(time.Now().UnixNano())
			c.inFlight.Add(-1)
			<-c.slot
		})
	}
}

// bufferedMsg returns the next message when br holds all of it, without
// consuming it: the caller discards it once done with the octets.
func bufferedMsg(br *bufio.Reader) ([]byte, bool) {
	if br.Buffered() < 2 {
		return nil, false
	}
	hdr, _ := br.Peek(2)
	n := int(binary.BigEndian.Uint16(hdr))
	if br.Buffered() < 2+n {
		return nil, false
	}
	b, _ := br.Peek(2 + n)
	return b[2:], true
}

// readMsg reads one length-prefixed message. Waiting for its first octet
// times out once the connection has had no query in progress for idle;
// the rest must follow within idle too.
func (c *tcpConn) readMsg(br *bufio.Reader, idle time.Duration) ([]byte, error) {
	var hdr [2]byte
	for {
		if c.closing.Load() {
			return nil, net.ErrClosed
		}
		deadline := time.Unix(0, c.last.Load()).Add(idle)
		if c.inFlight.Load() > 0 {
			deadline = time.Now().Add(idle) // the idle time starts when they are answered
		}
		_ = c.c.SetReadDeadline(deadline)
		if c.closing.Load() { // stop may have run between the check and the deadline
			return nil, net.ErrClosed
		}
		n, err := io.ReadFull(br, hdr[:])
		if err == nil {
			break
		}
		var ne net.Error
		if n == 0 && errors.As(err, &ne) && ne.Timeout() && !c.closing.Load() &&
			(c.inFlight.Load() > 0 || time.Since(time.Unix(0, c.last.Load())) < idle) {
			continue // busy, or an answer was written since the deadline was set
		}
		return nil, err
	}
	_ = c.c.SetReadDeadline(time.Now().Add(idle))
	msg := make([]byte, binary.BigEndian.Uint16(hdr[:]))
	if _, err := io.ReadFull(br, msg); err != nil {
		return nil, err
	}
	return msg, nil
}

// answerCached answers msg from the answer cache, when it holds the
// answer, or else written from the records when answerWire can, on the
// reading goroutine: either costs less than starting a goroutine, and
// its answer leaves in order. It reports whether it did.
func (c *tcpConn) answerCached(msg []byte) bool {
	st := c.s.settings()
	if !st.parseQuick(msg, dns.MaxMsgSize, &c.q) {
		return false
	}
	ans, rcode, ok := c.s.cached(st, &c.q, msg, c.hit)
	if !ok {
		var z servedZone
		var qname string
		if ans, z, qname, rcode, ok = c.s.answerWire(st, &c.q, msg, c.hit, &c.nw); !ok {
			return false
		}
		st.rememberWire(&c.q, ans, z, qname, rcode)
	}
	c.hit = ans[:0]
	c.s.countQuery(rcode)
	c.pendingN++
	c.pending = binary.BigEndian.AppendUint16(c.pending, uint16(len(ans)))
	c.pending = append(c.pending, ans...)
	if len(c.pending) >= tcpPendingMax {
		c.flush()
	}
	return true
}

// flush writes the answers from the cache gathered so far; a failed write
// closes the connection.
func (c *tcpConn) flush() {
	if len(c.pending) == 0 {
		return
	}
	if h := c.s.tcpFlushHook; h != nil {
		h(c.pendingN)
	}
	c.wmu.Lock()
	defer c.wmu.Unlock()
	_ = c.c.SetWriteDeadline(time.Now().Add(c.s.opts.TCPWriteTimeout))
	if _, err := c.c.Write(c.pending); err != nil {
		c.closing.Store(true)
		c.c.Close()
	} else {
		c.last.Store(time.Now().UnixNano())
	}
	c.pending, c.pendingN = c.pending[:0], 0
}

// serve answers one query read from the connection.
func (c *tcpConn) serve(msg []byte, idle time.Duration) {
	w := &tcpWriter{c: c, st: c.s.settings()}
	w.quick = w.st.parseQuick(msg, dns.MaxMsgSize, &w.q)
	r, raw := request(msg)
	if r == nil {
		return
	}
	w.tsig.verify(tsigProvider{c.s}, raw, r)
	if o := r.IsEdns0(); o != nil {
		for _, opt := range o.Option {
			if opt.Option() == dns.EDNS0TCPKEEPALIVE {
				w.keepalive = uint16(min(idle/(100*time.Millisecond), 0xffff))
			}
		}
	}
	if q := r.Question; len(q) == 1 && (q[0].Qtype == dns.TypeAXFR || q[0].Qtype == dns.TypeIXFR) {
		// A transfer's messages go out together, in order.
		c.wmu.Lock()
		defer c.wmu.Unlock()
		w.locked = true
	}
	c.s.ServeDNS(w, r)
}

// write sends one message, length first, within the write timeout; a
// failed write closes the connection.
func (c *tcpConn) write(b []byte, locked bool) (int, error) {
	if len(b) > dns.MaxMsgSize {
		return 0, errors.New("message too large")
	}
	if !locked {
		c.wmu.Lock()
		defer c.wmu.Unlock()
	}
	_ = c.c.SetWriteDeadline(time.Now().Add(c.s.opts.TCPWriteTimeout))
	var hdr [2]byte
	binary.BigEndian.PutUint16(hdr[:], uint16(len(b)))
	bufs := net.Buffers{hdr[:], b}
	if _, err := bufs.WriteTo(c.c); err != nil {
		c.closing.Store(true)
		c.c.Close()
		return 0, err
	}
	c.last.Store(time.Now().UnixNano())
	return len(b), nil
}

// tcpWriter is the dns.ResponseWriter of one TCP request.
type tcpWriter struct {
	c    *tcpConn
	tsig tsigState
	// keepalive, when the request carried edns-tcp-keepalive, is the
	// idle timeout in 100 ms units that answers with an OPT record
	// carry; locked is set while the request holds the write lock (a
	// transfer).
	keepalive uint16
	locked    bool
	// q is the request as the answer cache reads it, quick whether it
	// could, st the settings it was read with; sent the answer written.
	q     quickQuery
	quick bool
	st    *settings
	sent  []byte
}

var _ dns.ResponseWriter = (*tcpWriter)(nil)

func (w *tcpWriter) LocalAddr() net.Addr  { return w.c.c.LocalAddr() }
func (w *tcpWriter) RemoteAddr() net.Addr { return w.c.remote }
func (w *tcpWriter) TsigStatus() error    { return w.tsig.status }
func (w *tcpWriter) TsigTimersOnly(b bool) {
	w.tsig.timersOnly = b
}
func (w *tcpWriter) Close() error { return w.c.c.Close() }
func (w *tcpWriter) Hijack()      {}

func (w *tcpWriter) WriteMsg(m *dns.Msg) error {
	if w.keepalive > 0 {
		if o := m.IsEdns0(); o != nil {
			o.Option = append(o.Option, &dns.EDNS0_TCP_KEEPALIVE{Code: dns.EDNS0TCPKEEPALIVE, Timeout: w.keepalive})
		}
	}
	b, err := w.tsig.pack(m, nil)
	if err != nil {
		return err
	}
	_, err = w.Write(b)
	return err
}

func (w *tcpWriter) Write(b []byte) (int, error) {
	w.sent = b
	return w.c.write(b, w.locked)
}

// fill gives the answer cache the request and its answer, when the
// cache could read the request with the settings st.
func (w *tcpWriter) fill(st *settings) (*quickQuery, []byte) {
	if !w.quick || w.st != st {
		return nil, nil
	}
	return &w.q, w.sent
}
