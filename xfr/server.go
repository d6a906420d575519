package xfr

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/netip"
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	"github.com/miekg/dns"

	"github.com/cnsd/cnsd/loglimit"
	"github.com/cnsd/cnsd/schema"
	"github.com/cnsd/cnsd/store"
)

// Source is where the server reads zones: the store. Snapshots never
// change; each call of Watch returns a new channel that signals
// (coalesced, capacity 1) after the set of zones or a zone's serial
// changed, and is never closed.
type Source interface {
	Snapshot(zone string) *store.Snapshot
	Zones() []string
	Watch() <-chan struct{}
}

var _ Source = (*store.Store)(nil)

// Options are the parts of a Server that do not come from the
// configuration. Zero values take the defaults.
type Options struct {
	// PacketConns and Listeners, when either is set, are served instead
	// of binding the configuration's dns.listen addresses: tests bind
	// 127.0.0.1:0 themselves and learn the port. UDP sockets sharing a
	// local address (ListenUDP) are served by a worker each; a UDP
	// socket alone by a reader handing batches to GOMAXPROCS workers.
	// On Linux a socket with a worker of its own is read through a
	// duplicate of its descriptor with blocking calls (udpblock_linux.go):
	// Run closes that PacketConn when it starts, and the socket stays
	// bound until Run returns. Run closes every PacketConn by then.
	PacketConns []net.PacketConn
	Listeners   []net.Listener
	// Clock gives the time for peer tracking and for limiting log lines
	// (time.Now).
	Clock func() time.Time
	// Resolver resolves secondaries given as host names
	// (net.DefaultResolver).
	Resolver *net.Resolver
	// NotifyTimeout bounds one NOTIFY or SOA poll exchange (2 s).
	NotifyTimeout time.Duration
	// NotifyRetries is how often an unanswered NOTIFY is sent again,
	// with doubling back-off from NotifyBackoff (5 and 1 s).
	NotifyRetries int
	NotifyBackoff time.Duration
	// PollInterval is how often a secondary's SOA is asked for after a
	// NOTIFY or transfer until it serves the new serial (1 s), and
	// StaleAfter how long a secondary may stay behind before it is
	// marked stale (15 min).
	PollInterval time.Duration
	StaleAfter   time.Duration
	// NotifyResend is how long a secondary may stay behind after a
	// NOTIFY before it is sent the NOTIFY again (5 s); the wait doubles
	// with each resend up to 64 times that. An answered NOTIFY is no
	// promise to transfer; a secondary that dropped one would otherwise
	// stay behind until its SOA refresh timer runs out.
	NotifyResend time.Duration
	// ResolveInterval is how often secondaries' host names are resolved
	// again (5 min).
	ResolveInterval time.Duration
	// TCPWriteTimeout bounds each write to a TCP client (30 s): a client
	// that stops reading loses its connection.
	TCPWriteTimeout time.Duration
}

func (o *Options) defaults() {
	if o.Clock == nil {
		o.Clock = time.Now
	}
	if o.Resolver == nil {
		o.Resolver = net.DefaultResolver
	}
	if o.NotifyTimeout <= 0 {
		o.NotifyTimeout = 2 * time.Second
	}
	if o.NotifyRetries <= 0 {
		o.NotifyRetries = 5
	}
	if o.NotifyBackoff <= 0 {
		o.NotifyBackoff = time.Second
	}
	if o.PollInterval <= 0 {
		o.PollInterval = time.Second
	}
	if o.StaleAfter <= 0 {
		o.StaleAfter = 15 * time.Minute
	}
	if o.NotifyResend <= 0 {
		o.NotifyResend = 5 * time.Second
	}
	if o.ResolveInterval <= 0 {
		o.ResolveInterval = 5 * time.Minute
	}
	if o.TCPWriteTimeout <= 0 {
		o.TCPWriteTimeout = defaultTCPWriteTimeout
	}
}

// Server answers DNS queries and transfers for the zones of its
// configuration from the snapshots of a Source, and sends NOTIFY to
// secondaries. The configuration can be replaced while it runs.
type Server struct {
	src  Source
	log  *slog.Logger
	opts Options
	set  atomic.Pointer[settings]

	peers     *tracker
	queries   rcodeCounters
	transfers transferCounters
	diffs     diffCache // the last IXFR difference of each zone (diffcache.go)
	// clientLines limits the log lines outside clients (and secondaries
	// that refuse NOTIFY) can cause.
	clientLines *loglimit.Limiter
	// limit is the response rate limiter (rrl.go), nil when disabled;
	// secondaries the configured secondaries' addresses, which it
	// exempts.
	limit                  atomic.Pointer[limiter]
	secondaries            atomic.Pointer[map[netip.Addr]bool]
	rrlDropped, rrlSlipped atomic.Uint64

	// udpDropped counts the queries the kernel dropped, the sockets'
	// receive buffers full (udp.go); tcp is the TCP server while Run
	// runs.
	udpDropped atomic.Uint64
	tcp        atomic.Pointer[tcpServer]
	// udpReadHook, when set (by tests, before Run), is called by each
	// UDP reader before each read; tcpFlushHook with the answers each
	// write of a TCP connection's gathered answers carries.
	udpReadHook  func()
	tcpFlushHook func(answers int)
}

// Log lines caused by outside clients: at most one per client, zone and
// reason per clientLineInterval, for up to clientLineKeys such keys.
const (
	clientLineInterval = time.Minute
	clientLineKeys     = 4096
)

// New returns a Server for cfg reading zones from src.
func New(cfg *schema.Config, src Source, opts Options, log *slog.Logger) *Server {
	if log == nil {
		log = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	opts.defaults()
	s := &Server{src: src, log: log.With("component", "xfr"), opts: opts,
		clientLines: loglimit.New(clientLineInterval, clientLineKeys, opts.Clock)}
	s.set.Store(newSettings(cfg))
	s.peers = newTracker(s)
	s.setLimiter(cfg.RRL)
	s.peers.setSecondaries()
	return s
}

// SetConfig makes cfg the configuration of every query and transfer that
// starts from now on; transfers already running keep theirs.
func (s *Server) SetConfig(cfg *schema.Config) {
	s.set.Store(newSettings(cfg))
	s.setLimiter(cfg.RRL)
	s.peers.setSecondaries()
	s.peers.configChanged()
}

func (s *Server) settings() *settings { return s.set.Load() }

// Run serves DNS on the configured addresses (or the Options' sockets)
// over UDP (udp.go) and TCP (tcp.go) and sends NOTIFY after every
// change, until ctx ends. Queries read by then are answered, and
// transfers running at that moment are allowed to finish (for up to
// 30 s).
func (s *Server) Run(ctx context.Context) error {
	pcs, ls, err := s.bind(ctx)
	if err != nil {
		return err
	}
	// GOMAXPROCS workers per address, split among its sockets: one each
	// when there are as many sockets as workers (ListenUDP), all on the
	// socket when it is alone.
	type udpRun struct {
		u       *udpServer
		workers int
	}
	var udps []udpRun
	for _, group := range udpGroups(pcs) {
		if ap, err := netip.ParseAddrPort(group[0].LocalAddr().String()); err == nil {
			s.peers.serving = append(s.peers.serving, ap.Addr().Unmap())
		}
		workers := max(1, runtime.GOMAXPROCS(0)/len(group))
		for _, pc := range group {
			u, err := s.newUDP(pc)
			if err != nil {
				closeSockets(pcs, ls)
				return fmt.Errorf("dns server on udp %s: %w", pc.LocalAddr(), err)
			}
			udps = append(udps, udpRun{u, workers})
		}
	}
	blocked := 0
	for _, r := range udps {
		if r.workers == 1 {
			r.u.fd = r.u.detach() // every socket prepared: none is left open on an error above
			if r.u.fd != nil {
				blocked++
			}
		}
	}
	blockedThreads(blocked) // serveFD gives each back as it returns
	tcp := newTCPServer(s)
	s.tcp.Store(tcp)
	errc := make(chan error, len(ls)+1)
	var wg, accepting sync.WaitGroup
	for _, r := range udps {
		wg.Go(func() { r.u.run(r.workers) })
	}
	for _, l := range ls {
		accepting.Go(func() {
			if err := tcp.serve(l); err != nil {
				errc <- fmt.Errorf("dns server on tcp %s: %w", l.Addr(), err)
			}
		})
	}
	wg.Go(func() {
		if err := s.peers.run(ctx); err != nil && !errors.Is(err, context.Canceled) {
			errc <- err
		}
	})
	var runErr error
	select {
	case <-ctx.Done():
	case runErr = <-errc:
	}
	for _, r := range udps {
		r.u.stop()
	}
	closeSockets(pcs, ls)
	accepting.Wait()
	tcp.shutdown()
	done := make(chan struct{})
	go func() { tcp.wg.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(30 * time.Second):
		tcp.closeAll()
		<-done
	}
	wg.Wait()
	return runErr
}

// bind opens the server sockets: the Options' when given, else per
// configured address a TCP socket and GOMAXPROCS UDP sockets sharing it
// (ListenUDP), a worker each.
func (s *Server) bind(ctx context.Context) ([]net.PacketConn, []net.Listener, error) {
	if len(s.opts.PacketConns)+len(s.opts.Listeners) > 0 {
		return s.opts.PacketConns, s.opts.Listeners, nil
	}
	var pcs []net.PacketConn
	var ls []net.Listener
	for _, addr := range s.settings().cfg.DNS.Listen {
		group, err := ListenUDP(ctx, addr, runtime.GOMAXPROCS(0))
		if err != nil {
			closeSockets(pcs, ls)
			return nil, nil, err
		}
		pcs = append(pcs, group...)
		l, err := net.Listen("tcp", addr)
		if err != nil {
			closeSockets(pcs, ls)
			return nil, nil, fmt.Errorf("dns listen tcp %s: %w", addr, err)
		}
		ls = append(ls, l)
	}
	return pcs, ls, nil
}

func closeSockets(pcs []net.PacketConn, ls []net.Listener) {
	for _, pc := range pcs {
		pc.Close()
	}
	for _, l := range ls {
		l.Close()
	}
}

// ServeDNS answers one request: the UDP and TCP loops hand it every
// request (transport.go), those that do not parse as checkShape's
// stand-ins. An opcode it does
// not implement is NOTIMP before anything else is looked at, as NSD and
// the library answer it.
func (s *Server) ServeDNS(w dns.ResponseWriter, r *dns.Msg) {
	st := s.settings()
	if r.Opcode != dns.OpcodeQuery && r.Opcode != dns.OpcodeNotify {
		s.reply(w, r, dns.RcodeNotImplemented)
		return
	}
	if len(r.Question) != 1 || r.Response || !ednsWellFormed(r) {
		s.reply(w, r, dns.RcodeFormatError)
		return
	}
	if t := r.IsTsig(); t != nil && w.TsigStatus() != nil {
		peer := remoteAddr(w)
		s.warnClient("bad TSIG|"+peer.String()+"|"+t.Hdr.Name, "request with a bad TSIG signature",
			"peer", peer, "key", t.Hdr.Name, "err", w.TsigStatus())
		s.replyBadTSIG(w, r, st, w.TsigStatus())
		return
	}
	if r.Opcode == dns.OpcodeNotify {
		// This server is the primary; it takes NOTIFY from nobody.
		s.reply(w, r, dns.RcodeRefused)
		return
	}
	switch r.Question[0].Qtype {
	case dns.TypeAXFR:
		s.serveAXFR(w, r, st)
	case dns.TypeIXFR:
		s.serveIXFR(w, r, st)
	default:
		s.serveQuery(w, r, st)
	}
}

// reply sends an empty answer with rcode, echoing the question when
// there is one, and EDNS0 when the request's OPT record is well-formed
// (RFC 6891 §6.1.1). The header is the request's ID, opcode and RD, whatever
// the opcode (RFC 1035 §4.1.1), and CD for a query but not in FORMERR,
// with QR; the other bits are the responder's, and cnsd sets none of
// them here.
func (s *Server) reply(w dns.ResponseWriter, r *dns.Msg, rcode int) {
	if s.rateLimited(w, r, rcode) {
		return
	}
	m := new(dns.Msg)
	m.SetRcode(r, rcode)
	m.RecursionDesired = r.RecursionDesired // SetReply copies it for queries only
	if len(r.Question) != 1 {
		m.Question = nil
	}
	if rcode == dns.RcodeFormatError {
		m.CheckingDisabled = false
	}
	if o := r.IsEdns0(); o != nil && ednsWellFormed(r) {
		m.SetEdns0(uint16(s.settings().udpMaxPayload()), o.Do())
	}
	// RFC 8945 §5.3: the answer to a signed request is signed too.
	if t := r.IsTsig(); t != nil && w.TsigStatus() == nil {
		m.SetTsig(t.Hdr.Name, t.Algorithm, t.Fudge, time.Now().Unix())
	}
	_ = w.WriteMsg(m)
}
