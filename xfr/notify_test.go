package xfr

import (
	"context"
	"fmt"
	"log/slog"
	"net"
	"net/netip"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/miekg/dns"

	"github.com/cnsd/cnsd/logtest"
	"github.com/cnsd/cnsd/schema"
	"github.com/cnsd/cnsd/xfr/secondarytest"
)

// fakeSecondary answers NOTIFY and SOA queries on a loopback UDP port,
// as a secondary does, and records what it was sent.
type fakeSecondary struct {
	addr netip.AddrPort

	mu       sync.Mutex
	notifies []uint32     // serials of the NOTIFYs answered
	signed   int          // NOTIFYs whose TSIG verified
	drop     int          // NOTIFYs to leave unanswered before answering
	silent   bool         // answer no NOTIFY at all
	refuse   bool         // answer every NOTIFY REFUSED
	serial   uint32       // the serial it serves
	follow   bool         // serve each NOTIFY's serial at once
	polls    int          // SOA queries answered
	from     []netip.Addr // where each NOTIFY came from
	hold     chan struct{}
	// zones, when set, are the zones it carries: NOTIFY and SOA queries
	// for any other are REFUSED, as BIND and Knot answer them, and
	// counted in strays.
	zones  map[string]bool
	strays []string
	// pinned are zones it serves at a fixed serial whatever it is sent.
	pinned map[string]uint32
}

func startFake(t *testing.T, secrets map[string]string) *fakeSecondary {
	t.Helper()
	pc, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	f := &fakeSecondary{addr: netip.MustParseAddrPort(pc.LocalAddr().String()), follow: true}
	srv := &dns.Server{PacketConn: pc, Handler: f, TsigSecret: secrets}
	go srv.ActivateAndServe()
	t.Cleanup(func() { srv.Shutdown() })
	return f
}

func (f *fakeSecondary) ServeDNS(w dns.ResponseWriter, r *dns.Msg) {
	m := new(dns.Msg)
	m.SetReply(r)
	q := r.Question[0]
	f.mu.Lock()
	hold := f.hold
	stray := f.zones != nil && q.Qclass == dns.ClassINET && !f.zones[strings.ToLower(q.Name)]
	if stray {
		f.strays = append(f.strays, dns.OpcodeToString[r.Opcode]+" "+dns.TypeToString[q.Qtype]+" "+q.Name)
	}
	f.mu.Unlock()
	switch {
	case stray:
		m.Rcode = dns.RcodeRefused
	case r.Opcode == dns.OpcodeNotify:
		if hold != nil {
			<-hold
		}
		f.mu.Lock()
		if f.silent || f.drop > 0 {
			f.drop--
			f.mu.Unlock()
			return
		}
		soa := r.Answer[0].(*dns.SOA)
		f.notifies = append(f.notifies, soa.Serial)
		if ap, err := netip.ParseAddrPort(w.RemoteAddr().String()); err == nil {
			f.from = append(f.from, ap.Addr())
		}
		if f.refuse {
			m.Rcode = dns.RcodeRefused
			f.mu.Unlock()
			break
		}
		if r.IsTsig() != nil && w.TsigStatus() == nil {
			f.signed++
			m.SetTsig(r.IsTsig().Hdr.Name, r.IsTsig().Algorithm, 300, time.Now().Unix())
		}
		if f.follow {
			f.serial = soa.Serial
		}
		f.mu.Unlock()
	case q.Qclass == dns.ClassCHAOS:
		m.Answer = []dns.RR{&dns.TXT{Hdr: dns.RR_Header{Name: q.Name, Rrtype: dns.TypeTXT, Class: dns.ClassCHAOS}, Txt: []string{"fake 1.0"}}}
	case q.Qtype == dns.TypeSOA:
		f.mu.Lock()
		f.polls++
		serial := f.serial
		if pinned, ok := f.pinned[strings.ToLower(q.Name)]; ok {
			serial = pinned
		}
		m.Answer = []dns.RR{&dns.SOA{Hdr: dns.RR_Header{Name: q.Name, Rrtype: dns.TypeSOA, Class: dns.ClassINET, Ttl: 60},
			Ns: "ns.", Mbox: "h.", Serial: serial}}
		f.mu.Unlock()
	}
	w.WriteMsg(m)
}

func (f *fakeSecondary) seen() []uint32 {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]uint32(nil), f.notifies...)
}

// handClock is a clock a test moves by hand, for Options.Clock.
type handClock struct {
	mu  sync.Mutex
	now time.Time
}

func newHandClock() *handClock {
	return &handClock{now: time.Date(2026, 11, 23, 12, 0, 0, 0, time.UTC)}
}

func (c *handClock) Now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.now }

func (c *handClock) advance(d time.Duration) { c.mu.Lock(); defer c.mu.Unlock(); c.now = c.now.Add(d) }

// eventually waits until cond holds, failing the test after a while.
func eventually(t *testing.T, what string, cond func() bool, state ...func() string) {
	t.Helper()
	deadline := time.Now().Add(15 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			for _, st := range state {
				what += "; " + st()
			}
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

var fastOptions = Options{NotifyTimeout: 200 * time.Millisecond, NotifyBackoff: 10 * time.Millisecond,
	NotifyRetries: 3, PollInterval: 10 * time.Millisecond}

func notifyConfig(t *testing.T, peer string, extra string) string {
	return `{"my_name": "ns.example.test", "hostmaster": "hostmaster@example.test",
	  "forward_zones": {"example.test": {"networks": ["*"], "peers": ["` + peer + `"]` + extra + `}}`
}

func peerZoneOf(s *Server, addr netip.AddrPort, zone string) (PeerZone, string, bool) {
	for _, p := range s.Peers() {
		if p.Addr != addr.String() {
			continue
		}
		for _, z := range p.Zones {
			if z.Zone == zone {
				return z, p.Version, true
			}
		}
	}
	return PeerZone{}, "", false
}

func TestNotifyAndConfirm(t *testing.T) {
	f := startFake(t, nil)
	src := testStore(t, map[string][]string{"example.test.": {"a A 192.0.2.1"}})
	_, s := serve(t, parse(t, notifyConfig(t, f.addr.String(), "")+"}"), src, fastOptions)
	serial := uint32(src.Snapshot("example.test.").Serial())
	eventually(t, "the first NOTIFY", func() bool { return len(f.seen()) == 1 })
	next := commitLines(t, src, "example.test.", []string{"b A 192.0.2.2"})
	eventually(t, "the NOTIFY of the new serial", func() bool { return len(f.seen()) == 2 })
	if got := f.seen(); got[0] != serial || got[1] != next {
		t.Fatalf("NOTIFY serials %v, want [%d %d]", got, serial, next)
	}
	eventually(t, "the confirmed serial", func() bool {
		pz, v, _ := peerZoneOf(s, f.addr, "example.test.")
		return pz.Serial == next && v == "fake 1.0"
	})
	pz, _, _ := peerZoneOf(s, f.addr, "example.test.")
	if pz.NotifySent != 2 || pz.NotifyFailed != 0 || pz.Stale || !pz.BehindSince.IsZero() {
		t.Fatalf("peer zone %+v", pz)
	}
}

// TestNotifyCoalesces: commits made while a NOTIFY is in flight end in
// one more NOTIFY with the latest serial, not one per commit.
func TestNotifyCoalesces(t *testing.T) {
	f := startFake(t, nil)
	src := testStore(t, map[string][]string{"example.test.": {"a A 192.0.2.1"}})
	hold := make(chan struct{})
	f.mu.Lock()
	f.hold = hold
	f.mu.Unlock()
	_, s := serve(t, parse(t, notifyConfig(t, f.addr.String(), "")+"}"), src, Options{NotifyTimeout: 5 * time.Second,
		NotifyBackoff: 10 * time.Millisecond, PollInterval: 10 * time.Millisecond})
	var last uint32
	for i := range 20 {
		last = commitLines(t, src, "example.test.", []string{fmt.Sprintf("a A 192.0.2.%d", i+2)})
	}
	// The tracker learns of a commit after it returns: released before it
	// wants the last serial, the held NOTIFY would be followed by one for
	// a serial in between and one for the last.
	eventually(t, "the tracker wanting the last serial", func() bool {
		pz, _, _ := peerZoneOf(s, f.addr, "example.test.")
		return pz.Want == last
	})
	close(hold)
	eventually(t, "the NOTIFY of the last serial", func() bool {
		got := f.seen()
		return len(got) > 0 && got[len(got)-1] == last
	}, func() string { return fmt.Sprintf("last %d, seen %v, peers %+v", last, f.seen(), s.Peers()) })
	if got := f.seen(); len(got) > 2 {
		t.Fatalf("%d NOTIFYs %v for a burst of 20 commits, want at most 2", len(got), got)
	}
}

func TestNotifyRetries(t *testing.T) {
	cases := []struct {
		name         string
		drop         int
		silent       bool
		sent, failed uint64
	}{
		{name: "answered at once", sent: 1},
		{name: "answered on the third try", drop: 2, sent: 3},
		{name: "never answered", silent: true, sent: 4, failed: 1},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			f := startFake(t, nil)
			f.mu.Lock()
			f.drop, f.silent, f.follow = tc.drop, tc.silent, false
			f.mu.Unlock()
			src := testStore(t, map[string][]string{"example.test.": {"a A 192.0.2.1"}})
			opts := fastOptions
			opts.NotifyTimeout = 50 * time.Millisecond
			_, s := serve(t, parse(t, notifyConfig(t, f.addr.String(), "")+"}"), src, opts)
			eventually(t, "the NOTIFY round to end", func() bool {
				pz, _, _ := peerZoneOf(s, f.addr, "example.test.")
				return !pz.LastNotify.IsZero()
			})
			pz, _, _ := peerZoneOf(s, f.addr, "example.test.")
			if pz.NotifySent != tc.sent || pz.NotifyFailed != tc.failed {
				t.Fatalf("sent %d failed %d, want %d and %d", pz.NotifySent, pz.NotifyFailed, tc.sent, tc.failed)
			}
		})
	}
}

func TestNotifySigned(t *testing.T) {
	const secret = "c2VjcmV0IGtleSBmb3IgdHJhbnNmZXJz"
	f := startFake(t, map[string]string{"xfr.": secret})
	src := testStore(t, map[string][]string{"example.test.": {"a A 192.0.2.1"}})
	cfg := notifyConfig(t, f.addr.String(), `, "tsig_key": "xfr"`) +
		`, "tsig_keys": {"xfr": {"algorithm": "hmac-sha256", "secret": "` + secret + `"}}}`
	_, _ = serve(t, parse(t, cfg), src, fastOptions)
	eventually(t, "a signed NOTIFY", func() bool {
		f.mu.Lock()
		defer f.mu.Unlock()
		return f.signed == 1
	})
}

// TestNotifyHostName: a secondary given by host name and port is
// resolved, and NOTIFY goes to the address it resolves to.
func TestNotifyHostName(t *testing.T) {
	f := startFake(t, nil)
	src := testStore(t, map[string][]string{"example.test.": {"a A 192.0.2.1"}})
	opts := fastOptions
	opts.Resolver = loopbackResolver(t, "sec.example.test.")
	_, s := serve(t, parse(t, notifyConfig(t, fmt.Sprintf("sec.example.test:%d", f.addr.Port()), "")+"}"), src, opts)
	eventually(t, "a NOTIFY", func() bool { return len(f.seen()) == 1 })
	peers := s.Peers()
	if len(peers) != 1 || peers[0].Addr != f.addr.String() || len(peers[0].Names) != 1 || peers[0].Names[0] != "sec.example.test" {
		t.Fatalf("peers %+v", peers)
	}
	if got := s.AllowedPeers(); len(got) != 1 || got[0] != "127.0.0.1" {
		t.Fatalf("allowed peers %v", got)
	}
}

// loopbackResolver resolves name to 127.0.0.1 through a DNS server of its
// own on loopback.
func loopbackResolver(t *testing.T, name string) *net.Resolver {
	pc, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	h := dns.HandlerFunc(func(w dns.ResponseWriter, r *dns.Msg) {
		m := new(dns.Msg)
		m.SetReply(r)
		if q := r.Question[0]; q.Name == name && q.Qtype == dns.TypeA {
			m.Answer = []dns.RR{&dns.A{Hdr: dns.RR_Header{Name: name, Rrtype: dns.TypeA, Class: dns.ClassINET, Ttl: 60},
				A: net.IPv4(127, 0, 0, 1)}}
		}
		w.WriteMsg(m)
	})
	srv := &dns.Server{PacketConn: pc, Handler: h}
	go srv.ActivateAndServe()
	t.Cleanup(func() { srv.Shutdown() })
	return &net.Resolver{PreferGo: true, Dial: func(ctx context.Context, network, _ string) (net.Conn, error) {
		return (&net.Dialer{}).DialContext(ctx, "udp", pc.LocalAddr().String())
	}}
}

// TestPeerGoesStale: a secondary that stays behind for StaleAfter is
// marked stale and no longer counts for the journal.
func TestPeerGoesStale(t *testing.T) {
	f := startFake(t, nil)
	src := testStore(t, map[string][]string{"example.test.": {"a A 192.0.2.1"}})
	var mu sync.Mutex
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	opts := fastOptions
	opts.StaleAfter = time.Hour
	opts.Clock = func() time.Time { mu.Lock(); defer mu.Unlock(); return now }
	_, s := serve(t, parse(t, notifyConfig(t, f.addr.String(), "")+"}"), src, opts)
	first := uint32(src.Snapshot("example.test.").Serial())
	eventually(t, "the confirmed serial", func() bool { pz, _, _ := peerZoneOf(s, f.addr, "example.test."); return pz.Serial == first })
	if got, ok := s.OldestConfirmed("example.test."); !ok || got != first {
		t.Fatalf("oldest confirmed %d %v, want %d", got, ok, first)
	}
	f.mu.Lock()
	f.follow = false // from now on it stays at the first serial
	f.mu.Unlock()
	commitLines(t, src, "example.test.", []string{"b A 192.0.2.2"})
	eventually(t, "the second NOTIFY", func() bool { return len(f.seen()) == 2 })
	mu.Lock()
	now = now.Add(2 * time.Hour)
	mu.Unlock()
	eventually(t, "the peer to go stale", func() bool { pz, _, _ := peerZoneOf(s, f.addr, "example.test."); return pz.Stale })
	if _, ok := s.OldestConfirmed("example.test."); ok {
		t.Fatal("a stale secondary still holds the journal")
	}
	if !s.ForgetPeer(f.addr.String()) || len(s.Peers()) != 0 {
		t.Fatalf("ForgetPeer left %+v", s.Peers())
	}
}

func parse(t *testing.T, doc string) *schema.Config {
	t.Helper()
	cfg, err := schema.Parse([]byte(doc))
	if err != nil {
		t.Fatalf("%v\n%s", err, doc)
	}
	return cfg
}

// TestLearntSecondaries: a configured secondary that transfers is a
// NOTIFY target on its configured port; another address the ACL lets
// transfer is not — an operator's dig is no secondary — unless
// learn_peers is on and it fetched after_transfers successive serials.
// A learnt one never holds the journal, is forgotten after
// forget_after_seconds without a transfer, and ForgetPeer drops it.
func TestLearntSecondaries(t *testing.T) {
	peer, other := netip.MustParseAddr("192.0.2.53"), netip.MustParseAddr("198.51.100.7")
	peerTarget, otherTarget := netip.MustParseAddrPort("192.0.2.53:5353"), netip.MustParseAddrPort("198.51.100.7:53")
	type transfer struct {
		addr   netip.Addr
		serial uint32 // added to the zone's
		after  time.Duration
	}
	cases := []struct {
		name      string
		learn     string // the learn_peers section
		transfers []transfer
		want      []netip.AddrPort
		learnt    bool // the other address is a learnt target
		quiet     bool // learnt, then forgotten at the next round
	}{
		{name: "configured secondary", transfers: []transfer{{addr: peer}}, want: []netip.AddrPort{peerTarget}},
		{name: "one-off transfer", transfers: []transfer{{addr: other}}, want: []netip.AddrPort{peerTarget}},
		{name: "repeated, learning off", transfers: []transfer{{addr: other}, {addr: other, serial: 1}, {addr: other, serial: 2}},
			want: []netip.AddrPort{peerTarget}},
		{name: "one-off, learning on", learn: `{"enabled": true}`, transfers: []transfer{{addr: other}},
			want: []netip.AddrPort{peerTarget}},
		{name: "same serial thrice", learn: `{"enabled": true}`, transfers: []transfer{{addr: other}, {addr: other}, {addr: other}},
			want: []netip.AddrPort{peerTarget}},
		{name: "three serials", learn: `{"enabled": true}`,
			transfers: []transfer{{addr: other}, {addr: other, serial: 1}, {addr: other, serial: 2}},
			want:      []netip.AddrPort{peerTarget, otherTarget}, learnt: true},
		{name: "two serials enough", learn: `{"enabled": true, "after_transfers": 2}`,
			transfers: []transfer{{addr: other}, {addr: other, serial: 1}},
			want:      []netip.AddrPort{peerTarget, otherTarget}, learnt: true},
		{name: "pause between transfers", learn: `{"enabled": true, "forget_after_seconds": 3600}`,
			transfers: []transfer{{addr: other}, {addr: other, serial: 1}, {addr: other, serial: 2, after: time.Hour}},
			want:      []netip.AddrPort{peerTarget}},
		{name: "learnt, then quiet", learn: `{"enabled": true, "forget_after_seconds": 3600}`,
			transfers: []transfer{{addr: other}, {addr: other, serial: 1}, {addr: other, serial: 2}, {after: time.Hour}},
			want:      []netip.AddrPort{peerTarget}, quiet: true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			src := testStore(t, map[string][]string{"example.test.": {"a A 192.0.2.1"}})
			now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
			top := ""
			if tc.learn != "" {
				top = `, "learn_peers": ` + tc.learn
			}
			cfg := parse(t, notifyConfig(t, "192.0.2.53:5353", `, "allow_transfer": ["198.51.100.0/24"]`)+top+"}")
			s := New(cfg, src, Options{Clock: func() time.Time { return now }}, nil)
			serial := uint32(src.Snapshot("example.test.").Serial())
			s.peers.round() // the configured secondary
			for _, tr := range tc.transfers {
				now = now.Add(tr.after)
				if tr.addr.IsValid() {
					s.peers.transferred(tr.addr, "example.test.", serial+tr.serial, "axfr")
				}
			}
			// As the transfers left it (the quiet case aside), and after
			// a round of NOTIFYs.
			for _, when := range []string{"transfers", "round"} {
				if when == "round" {
					s.peers.round()
				}
				var got []netip.AddrPort
				for _, p := range s.Peers() {
					got = append(got, netip.MustParseAddrPort(p.Addr))
					if learnt := p.Addr == otherTarget.String(); len(p.Zones) != 1 || p.Zones[0].Learnt != learnt {
						t.Errorf("%s: %+v, want learnt %v", p.Addr, p.Zones, learnt)
					}
				}
				want := tc.want
				if when == "transfers" && tc.quiet {
					want = []netip.AddrPort{peerTarget, otherTarget} // learnt until the round
				}
				if !slices.Equal(got, want) {
					t.Fatalf("after the %s: secondaries %v, want %v", when, got, want)
				}
			}
			if tc.learnt {
				s.peers.mu.Lock()
				s.peers.peers[otherTarget].zones["example.test."].confirmed = serial
				s.peers.mu.Unlock()
				if oldest, ok := s.OldestConfirmed("example.test."); ok {
					t.Errorf("a learnt secondary holds the journal at %d", oldest)
				}
				if !s.ForgetPeer(other.String()) {
					t.Fatal("ForgetPeer knew nothing of the learnt secondary")
				}
				s.peers.round()
				if len(s.Peers()) != 1 {
					t.Fatalf("after ForgetPeer: %+v", s.Peers())
				}
			}
		})
	}
}

// TestNotifyNotHeldByPolling: the NOTIFY of a new serial goes out while
// the secondary is still being polled for the previous one, not after.
func TestNotifyNotHeldByPolling(t *testing.T) {
	f := startFake(t, nil)
	f.mu.Lock()
	f.follow = false // never catches up: polling would go on
	f.mu.Unlock()
	src := testStore(t, map[string][]string{"example.test.": {"a A 192.0.2.1"}})
	opts := fastOptions
	opts.PollInterval = time.Hour
	_, _ = serve(t, parse(t, notifyConfig(t, f.addr.String(), "")+"}"), src, opts)
	eventually(t, "the first NOTIFY", func() bool { return len(f.seen()) == 1 })
	next := commitLines(t, src, "example.test.", []string{"b A 192.0.2.2"})
	eventually(t, "the second NOTIFY, before the next poll", func() bool {
		got := f.seen()
		return len(got) == 2 && got[1] == next
	})
}

// TestNotifyResentWhileBehind: a secondary that answers NOTIFY but does
// not catch up is sent it again after NotifyResend, then after twice
// that, and no more once it serves the serial.
func TestNotifyResentWhileBehind(t *testing.T) {
	f := startFake(t, nil)
	f.mu.Lock()
	f.follow, f.serial = false, 1 // answers NOTIFY, keeps serving serial 1
	f.mu.Unlock()
	src := testStore(t, map[string][]string{"example.test.": {"a A 192.0.2.1"}})
	clock := newHandClock()
	advance := clock.advance
	opts := fastOptions
	opts.NotifyResend = time.Minute
	opts.Clock = clock.Now
	_, s := serve(t, parse(t, notifyConfig(t, f.addr.String(), "")+"}"), src, opts)
	serial := uint32(src.Snapshot("example.test.").Serial())
	polls := func() int { f.mu.Lock(); defer f.mu.Unlock(); return f.polls }
	// stillSeen advances the clock by d, lets the worker poll twice, and
	// checks that no NOTIFY went out meanwhile.
	stillSeen := func(d time.Duration, n int) {
		t.Helper()
		advance(d)
		p := polls()
		eventually(t, "two more polls", func() bool { return polls() >= p+2 })
		if got := f.seen(); len(got) != n {
			t.Fatalf("after %v more: NOTIFYs %v, want %d", d, got, n)
		}
	}
	// notified waits for the n-th NOTIFY and for the worker to note when
	// it went, so that the clock moves on only from then.
	notified := func(what string, n int) {
		t.Helper()
		at := opts.Clock()
		eventually(t, what, func() bool {
			pz, _, _ := peerZoneOf(s, f.addr, "example.test.")
			return len(f.seen()) == n && pz.LastNotify.Equal(at)
		})
	}
	notified("the first NOTIFY", 1)
	stillSeen(59*time.Second, 1)
	advance(time.Second)
	notified("the NOTIFY sent again after a minute behind", 2)
	stillSeen(119*time.Second, 2)
	advance(time.Second)
	notified("the NOTIFY sent again after two more minutes", 3)
	if got := f.seen(); got[1] != serial || got[2] != serial {
		t.Fatalf("NOTIFY serials %v, want %d each time", got, serial)
	}
	f.mu.Lock()
	f.serial = serial
	f.mu.Unlock()
	eventually(t, "the confirmed serial", func() bool { pz, _, _ := peerZoneOf(s, f.addr, "example.test."); return pz.Serial == serial })
	advance(time.Hour)
	next := commitLines(t, src, "example.test.", []string{"b A 192.0.2.2"})
	eventually(t, "the NOTIFY of the next serial", func() bool { return len(f.seen()) == 4 })
	if got := f.seen(); got[3] != next {
		t.Fatalf("NOTIFY serials %v, want the fourth to be %d and no resend once caught up", got, next)
	}
	pz, _, _ := peerZoneOf(s, f.addr, "example.test.")
	if pz.NotifySent != 4 || pz.NotifyFailed != 0 {
		t.Fatalf("peer zone %+v, want 4 NOTIFYs sent, none failed", pz)
	}
}

// TestRefusedNotifyLoggedOnce: a secondary that refuses NOTIFY for a zone
// refuses every serial; each refusal counts as a failure, but the log
// says so (once refusedQuietly has passed) once a minute.
func TestRefusedNotifyLoggedOnce(t *testing.T) {
	f := startFake(t, nil)
	f.mu.Lock()
	f.refuse, f.follow = true, false
	f.mu.Unlock()
	src := testStore(t, map[string][]string{"example.test.": {"a A 192.0.2.1"}})
	logs := &logtest.Buffer{}
	opts := fastOptions
	clock := newHandClock()
	opts.Clock = clock.Now
	_, s := serveLogged(t, parse(t, notifyConfig(t, f.addr.String(), "")+"}"), src, opts, slog.New(slog.NewTextHandler(logs, nil)))
	failed := func() uint64 {
		pz, _, _ := peerZoneOf(s, f.addr, "example.test.")
		return pz.NotifyFailed
	}
	eventually(t, "the first NOTIFY refused", func() bool { return failed() == 1 })
	clock.advance(refusedQuietly)
	for i := range 5 {
		commitLines(t, src, "example.test.", []string{fmt.Sprintf("b A 192.0.2.%d", i+2)})
		eventually(t, "the NOTIFY of the new serial refused", func() bool { return failed() == uint64(i+2) })
	}
	got := logs.Lines("NOTIFY failed")
	if len(got) != 1 || !strings.Contains(got[0], "err=\"answered REFUSED\"") {
		t.Fatalf("log lines for 6 refused NOTIFYs: %q, want one saying REFUSED", got)
	}
}

// TestFirstRefusedNotifyQuiet: a secondary that refuses a zone's NOTIFYs
// for a while (a zone that just joined the catalog, before the secondary
// read the catalog again) and then takes them is no warning; refusals
// for longer than refusedQuietly are.
func TestFirstRefusedNotifyQuiet(t *testing.T) {
	f := startFake(t, nil)
	f.mu.Lock()
	f.refuse, f.follow = true, false
	f.mu.Unlock()
	src := testStore(t, map[string][]string{"example.test.": {"a A 192.0.2.1"}})
	logs := &logtest.Buffer{}
	clock := newHandClock()
	advance := clock.advance
	opts := fastOptions
	opts.NotifyResend = time.Minute
	opts.Clock = clock.Now
	_, s := serveLogged(t, parse(t, notifyConfig(t, f.addr.String(), "")+"}"), src, opts, slog.New(slog.NewTextHandler(logs, nil)))
	zone := func() PeerZone { pz, _, _ := peerZoneOf(s, f.addr, "example.test."); return pz }
	quiet := func(what string) {
		t.Helper()
		if got := logs.Lines("NOTIFY failed"); len(got) != 0 {
			t.Fatalf("%s logged %q, want nothing", what, got)
		}
	}
	eventually(t, "the first NOTIFY refused", func() bool { return zone().NotifyFailed == 1 })
	quiet("a first refusal")
	advance(refusedQuietly - time.Second)
	commitLines(t, src, "example.test.", []string{"b A 192.0.2.2"})
	eventually(t, "the next serial's NOTIFY refused", func() bool { return zone().NotifyFailed == 2 })
	quiet("a refusal within refusedQuietly of the first")
	f.mu.Lock()
	f.refuse, f.follow = false, true
	f.mu.Unlock()
	advance(time.Minute)
	serial := uint32(src.Snapshot("example.test.").Serial())
	eventually(t, "the NOTIFY sent again, taken", func() bool { return zone().Serial == serial })
	quiet("refusals then an accepted NOTIFY")

	f.mu.Lock()
	f.refuse = true
	f.mu.Unlock()
	commitLines(t, src, "example.test.", []string{"c A 192.0.2.3"})
	eventually(t, "the next serial's NOTIFY refused", func() bool { return zone().NotifyFailed == 3 })
	quiet("the first refusal after an accepted NOTIFY")
	advance(refusedQuietly)
	commitLines(t, src, "example.test.", []string{"d A 192.0.2.4"})
	eventually(t, "the next serial's NOTIFY refused", func() bool { return zone().NotifyFailed == 4 })
	eventually(t, "a line for refusals over refusedQuietly", func() bool { return len(logs.Lines("NOTIFY failed")) == 1 })
	if got := logs.Lines("NOTIFY failed")[0]; !strings.Contains(got, "level=WARN") || !strings.Contains(got, `err="answered REFUSED"`) {
		t.Fatalf("line %q, want a warning saying REFUSED", got)
	}
}

// TestTransferFromSharedAddress: a transfer from an address where one
// secondary listens stands in for its NOTIFY and counts for it; where
// several listen on different ports it cannot be told apart, so it
// counts for none of them and every one is still owed the NOTIFY — one
// secondary's transfer must not leave another behind.
func TestTransferFromSharedAddress(t *testing.T) {
	cases := []struct {
		name    string
		peers   string
		top     string // further top-level settings
		targets []string
		counted bool
	}{
		{name: "one secondary at the address", peers: `"192.0.2.53:5353"`,
			targets: []string{"192.0.2.53:5353"}, counted: true},
		{name: "a learnt secondary there", peers: `"198.51.100.9"`, top: `, "learn_peers": {"enabled": true, "after_transfers": 1}`,
			targets: []string{"192.0.2.53:53"}, counted: true},
		{name: "two secondaries at the address", peers: `"192.0.2.53:5353", "192.0.2.53:5354"`,
			targets: []string{"192.0.2.53:5353", "192.0.2.53:5354"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			src := testStore(t, map[string][]string{"example.test.": {"a A 192.0.2.1"}})
			cfg := `{"my_name": "ns.example.test", "hostmaster": "hostmaster@example.test",
			  "forward_zones": {"example.test": {"networks": ["*"], "peers": [` + tc.peers + `]}}` + tc.top + `}`
			s := New(parse(t, cfg), src, Options{}, nil)
			serial := uint32(src.Snapshot("example.test.").Serial())
			s.peers.transferred(netip.MustParseAddr("192.0.2.53"), "example.test.", serial, "ixfr")
			var got []string
			for _, p := range s.Peers() {
				if strings.HasPrefix(p.Addr, "192.0.2.53:") {
					got = append(got, p.Addr)
				}
			}
			if !slices.Equal(got, tc.targets) {
				t.Fatalf("secondaries at the address %v, want %v", got, tc.targets)
			}
			for _, target := range tc.targets {
				pz := s.peers.peers[netip.MustParseAddrPort(target)].zones["example.test."]
				if counted := pz.ixfr == 1; counted != tc.counted {
					t.Errorf("%s: IXFR counted %d, want counted %v", target, pz.ixfr, tc.counted)
				}
				if owed := pz.notified != serial; owed == tc.counted || pz.want != serial {
					t.Errorf("%s: notified %d want %d (serial %d): NOTIFY owed %v, want %v",
						target, pz.notified, pz.want, serial, owed, !tc.counted)
				}
			}
		})
	}
}

// TestPeersFollowConfig: a secondary taken out of the configuration, or
// of a zone that is no longer served, is forgotten and its NOTIFYs stop.
func TestPeersFollowConfig(t *testing.T) {
	kept, dropped := startFake(t, nil), startFake(t, nil)
	src := testStore(t, map[string][]string{"example.test.": {"a A 192.0.2.1"}})
	both := notifyConfig(t, kept.addr.String()+`", "`+dropped.addr.String(), "") + "}"
	_, s := serve(t, parse(t, both), src, fastOptions)
	listed := func() []string {
		var out []string
		for _, p := range s.Peers() {
			out = append(out, p.Addr)
		}
		return out
	}
	eventually(t, "both secondaries NOTIFYed", func() bool { return len(kept.seen()) == 1 && len(dropped.seen()) == 1 })
	s.SetConfig(parse(t, notifyConfig(t, kept.addr.String(), "")+"}"))
	eventually(t, "the dropped secondary forgotten", func() bool { return slices.Equal(listed(), []string{kept.addr.String()}) },
		func() string { return fmt.Sprint(listed()) })
	next := commitLines(t, src, "example.test.", []string{"b A 192.0.2.2"})
	eventually(t, "the NOTIFY of the next serial", func() bool { return len(kept.seen()) == 2 })
	if got := dropped.seen(); len(got) != 1 {
		t.Fatalf("the dropped secondary was sent %v after it left the configuration (serial %d)", got, next)
	}
}

// TestNotifySource: NOTIFY goes out from the address cnsd serves on, not
// whichever the kernel would pick, so that a secondary taking NOTIFY only
// from its primary's address accepts it; the kernel picks when cnsd serves
// on the wildcard.
func TestNotifySource(t *testing.T) {
	cases := []struct {
		name, listen string
		want         netip.Addr
	}{
		{name: "a loopback address other than the kernel's choice", listen: "127.0.0.3", want: netip.MustParseAddr("127.0.0.3")},
		{name: "the wildcard", listen: "0.0.0.0", want: netip.MustParseAddr("127.0.0.1")},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			f := startFake(t, nil)
			src := testStore(t, map[string][]string{"example.test.": {"a A 192.0.2.1"}})
			pc, l := secondarytest.ListenPairOn(t, netip.MustParseAddr(tc.listen))
			opts := fastOptions
			opts.PacketConns, opts.Listeners = []net.PacketConn{pc}, []net.Listener{l}
			s := New(parse(t, notifyConfig(t, f.addr.String(), "")+"}"), src, opts, nil)
			ctx, cancel := context.WithCancel(context.Background())
			done := make(chan error, 1)
			go func() { done <- s.Run(ctx) }()
			defer func() { cancel(); <-done }()
			eventually(t, "a NOTIFY", func() bool { return len(f.seen()) > 0 })
			f.mu.Lock()
			from := f.from[0]
			f.mu.Unlock()
			if from != tc.want {
				t.Fatalf("NOTIFY from %s, want from %s", from, tc.want)
			}
		})
	}
}
