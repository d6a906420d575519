package xfr

import (
	"encoding/binary"
	"net"
	"net/netip"
	"reflect"
	"sync"
	"time"

	"github.com/miekg/dns"

	"github.com/cnsd/cnsd/schema"
)

// Response rate limiting (RRL), as BIND and Knot do it: answers to UDP
// queries are counted per client prefix and kind of answer, and beyond
// the configured rate they are dropped, every slip-th one sent truncated
// instead so that a real client retries over TCP. A spoofed flood then
// cannot turn the server into a reflector aimed at the spoofed address,
// and one flooding prefix leaves every other one answered.

// answerKind is the bucket an answer counts in besides its client's
// prefix: a flood of NXDOMAINs or of REFUSEDs must not use up the
// allowance of real answers, nor the reverse.
type answerKind uint8

const (
	kindAnswer   answerKind = iota // records, or NODATA
	kindNXDomain                   // the name does not exist
	kindError                      // REFUSED, FORMERR, SERVFAIL, …
)

func kindOf(rcode int) answerKind {
	switch rcode {
	case dns.RcodeSuccess:
		return kindAnswer
	case dns.RcodeNameError:
		return kindNXDomain
	}
	return kindError
}

// verdict is what becomes of one answer.
type verdict uint8

const (
	send verdict = iota
	drop
	slip // sent empty and truncated (TC=1)
)

// rrlShards splits the table so that two cores answering at once seldom
// wait for the same lock.
const rrlShards = 16

// rrlKey names one bucket: the client's prefix, as the 16 bytes of its
// masked address (IPv4 mapped), and the kind of answer.
type rrlKey struct {
	net  [16]byte
	kind answerKind
}

// rrlBucket is one bucket's state as a generic cell rate algorithm: tat
// is the time (Unix nanoseconds) at which the bucket would be empty again
// if nothing more were sent. An answer moves it on by one interval; the
// answer is limited when tat is more than a second ahead of now.
// limited counts the limited answers, for slip.
type rrlBucket struct {
	tat     int64
	limited uint32
}

// limiter is the rate limiter of one configuration; nil when disabled.
// Its table is replaced with the configuration, which forgets the
// buckets: a reload is rare, and a flood is limited again within a
// second.
type limiter struct {
	conf     schema.RRLConfig
	interval int64 // nanoseconds one answer costs: 1 s / rate
	burst    int64 // how far ahead of now tat may run before answers are limited
	window   int64 // how far ahead of now tat may run at most
	v4, v6   int   // prefix lengths
	perShard int
	shards   [rrlShards]rrlShard
}

// rrlShard is one part of the table. mu guards buckets.
type rrlShard struct {
	mu      sync.Mutex
	buckets map[rrlKey]rrlBucket
}

// newLimiter returns the limiter cfg asks for, nil when it is disabled.
func newLimiter(cfg schema.RRLConfig) *limiter {
	if cfg.Disabled || cfg.ResponsesPerSecond <= 0 {
		return nil
	}
	l := &limiter{conf: cfg, interval: int64(time.Second) / int64(cfg.ResponsesPerSecond),
		burst: int64(time.Second), window: max(int64(cfg.Window), int64(time.Second)),
		v4: cfg.IPv4PrefixLength, v6: cfg.IPv6PrefixLength, perShard: max(cfg.TableSize/rrlShards, 1)}
	for i := range l.shards {
		l.shards[i].buckets = make(map[rrlKey]rrlBucket)
	}
	return l
}

// exempt reports whether addr is in rrl.exempt.
func (l *limiter) exempt(addr netip.Addr) bool {
	return inPrefixes(addr, l.conf.Exempt)
}

// key is the bucket of an answer of kind to addr.
func (l *limiter) key(addr netip.Addr, kind answerKind) rrlKey {
	bits := l.v6
	if addr.Is4() {
		bits = l.v4
	}
	p, _ := addr.Prefix(bits)
	return rrlKey{net: p.Addr().As16(), kind: kind}
}

// take counts one answer of kind to addr at now and says what becomes of
// it.
func (l *limiter) take(addr netip.Addr, kind answerKind, now time.Time) verdict {
	k := l.key(addr, kind)
	h := binary.LittleEndian.Uint64(k.net[:8]) ^ binary.LittleEndian.Uint64(k.net[8:]) ^ uint64(k.kind)
	h *= 0x9e3779b97f4a7c15 // spread the prefix bits over the top ones
	sh := &l.shards[h>>60]
	t := now.UnixNano()
	sh.mu.Lock()
	defer sh.mu.Unlock()
	b, ok := sh.buckets[k]
	if !ok && len(sh.buckets) >= l.perShard {
		sh.evictLocked(t)
	}
	b.tat = max(b.tat, t)
	v := send
	if b.tat-t > l.burst-l.interval {
		// Over the rate. The answer still counts, up to the window: a
		// prefix that keeps flooding stays limited.
		b.limited++
		v = drop
		if l.conf.Slip > 0 && b.limited%uint32(l.conf.Slip) == 0 {
			v = slip
		}
	}
	b.tat = min(b.tat+l.interval, t+l.window)
	sh.buckets[k] = b
	return v
}

// evictLocked makes room for one bucket: the first idle one (its tat
// passed) among a few, else the first one seen. Go's map iteration
// starts at a random place, so that is an arbitrary one.
func (sh *rrlShard) evictLocked(now int64) {
	const look = 8
	var victim rrlKey
	n := 0
	for k, b := range sh.buckets {
		if n == 0 {
			victim = k
		}
		if b.tat <= now {
			victim = k
			break
		}
		if n++; n == look {
			break
		}
	}
	delete(sh.buckets, victim)
}

// size is the number of buckets held, for tests.
func (l *limiter) size() int {
	n := 0
	for i := range l.shards {
		l.shards[i].mu.Lock()
		n += len(l.shards[i].buckets)
		l.shards[i].mu.Unlock()
	}
	return n
}

// rateLimited applies RRL to the answer with rcode to r, and reports
// whether it took the answer over: dropped it, or sent it truncated
// instead. Answers over TCP (a spoofed source cannot complete the
// handshake), to configured secondaries, to rrl.exempt and to requests
// with a valid TSIG signature are never limited.
func (s *Server) rateLimited(w dns.ResponseWriter, r *dns.Msg, rcode int) bool {
	if s.limit.Load() == nil {
		return false
	}
	ua, ok := w.RemoteAddr().(*net.UDPAddr)
	if !ok || r.IsTsig() != nil && w.TsigStatus() == nil {
		return false
	}
	switch s.limitVerdict(ua.AddrPort().Addr().Unmap(), rcode) {
	case send:
		return false
	case slip:
		m := new(dns.Msg)
		m.SetReply(r)
		m.Truncated = true
		_ = w.WriteMsg(m)
	}
	return true
}

// limitVerdict counts an answer with rcode to addr (unmapped), over UDP
// to an unsigned request, and says what becomes of it.
func (s *Server) limitVerdict(addr netip.Addr, rcode int) verdict {
	l := s.limit.Load()
	if l == nil || (*s.secondaries.Load())[addr] || l.exempt(addr) {
		return send
	}
	v := l.take(addr, kindOf(rcode), s.opts.Clock())
	switch v {
	case slip:
		s.rrlSlipped.Add(1)
	case drop:
		s.rrlDropped.Add(1)
	}
	return v
}

// RateLimitCounts are the answers response rate limiting took over since
// start.
type RateLimitCounts struct {
	Dropped uint64 // not sent
	Slipped uint64 // sent empty and truncated (TC=1) instead
}

// RateLimitCounts returns the answers rate limiting took over so far.
func (s *Server) RateLimitCounts() RateLimitCounts {
	return RateLimitCounts{Dropped: s.rrlDropped.Load(), Slipped: s.rrlSlipped.Load()}
}

// setLimiter installs the rate limiter cfg asks for, unless the one in
// place already is: a reload that leaves rrl alone keeps the buckets.
func (s *Server) setLimiter(cfg schema.RRLConfig) {
	if cur := s.limit.Load(); cur != nil && reflect.DeepEqual(cur.conf, cfg) {
		return
	}
	s.limit.Store(newLimiter(cfg))
}

// setSecondaries records the addresses of every configured secondary
// (host names by their last resolution), whose queries are never rate
// limited: they poll the SOA of every zone.
func (t *tracker) setSecondaries() {
	set := map[netip.Addr]bool{}
	for _, access := range t.s.settings().allAccess() {
		for _, a := range t.peerAddrs(access) {
			set[a] = true
		}
	}
	t.s.secondaries.Store(&set)
}
