package xfr

import (
	"net"
	"net/netip"
	"sync"
	"testing"
	"time"

	"github.com/miekg/dns"

	"github.com/cnsd/cnsd/schema"
)

// burstResult is what came back for a burst of identical UDP queries.
type burstResult struct{ answered, truncated, lost int }

// burst sends n queries for qname from a UDP socket bound to src, all
// before reading, and sorts what comes back within a short wait: full
// answers, empty truncated ones, and none.
func burst(t *testing.T, src, server, qname string, n int) burstResult {
	t.Helper()
	conn, err := net.ListenUDP("udp", net.UDPAddrFromAddrPort(netip.AddrPortFrom(netip.MustParseAddr(src), 0)))
	if err != nil {
		t.Fatalf("bind the client to %s: %v", src, err)
	}
	defer conn.Close()
	to := net.UDPAddrFromAddrPort(netip.MustParseAddrPort(server))
	for i := range n {
		m := new(dns.Msg).SetQuestion(qname, dns.TypeA)
		m.Id = uint16(i + 1)
		buf, _ := m.Pack()
		if _, err := conn.WriteToUDP(buf, to); err != nil {
			t.Fatal(err)
		}
	}
	var res burstResult
	buf := make([]byte, 65535)
	for got := 0; got < n; got++ {
		// Every answer that comes does so at once; a dropped one never.
		_ = conn.SetReadDeadline(time.Now().Add(500 * time.Millisecond))
		size, _, err := conn.ReadFromUDP(buf)
		if err != nil {
			break
		}
		m := new(dns.Msg)
		if err := m.Unpack(buf[:size]); err != nil {
			t.Fatalf("answer from %s: %v", server, err)
		}
		switch {
		case m.Truncated && len(m.Answer)+len(m.Ns) == 0:
			res.truncated++
		case !m.Truncated:
			res.answered++
		default:
			t.Fatalf("a truncated answer with records: %v", m)
		}
	}
	res.lost = n - res.answered - res.truncated
	return res
}

// TestRateLimitFlood: a flood from one /24 is answered up to the rate,
// every second limited answer goes out truncated and the rest is
// dropped; another /24 (127.0.1.1 against 127.0.0.1), NXDOMAINs to the
// flooding one, and TCP are still answered. With the clock standing
// still, the rate of 20 a second lets exactly 20 through.
func TestRateLimitFlood(t *testing.T) {
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	var mu sync.Mutex
	clock := func() time.Time { mu.Lock(); defer mu.Unlock(); return now }
	cases := []struct {
		name  string
		extra string
		flood burstResult // for 100 queries from 127.0.0.1
	}{
		{name: "defaults", flood: burstResult{answered: 20, truncated: 40, lost: 40}},
		{name: "slip 0", extra: `, "rrl": {"slip": 0}`, flood: burstResult{answered: 20, lost: 80}},
		{name: "slip 1, rate 50", extra: `, "rrl": {"slip": 1, "responses_per_second": 50}`, flood: burstResult{answered: 50, truncated: 50}},
		{name: "disabled", extra: `, "rrl": {"disabled": true}`, flood: burstResult{answered: 100}},
		{name: "exempt", extra: `, "rrl": {"exempt": ["127.0.0.0/30"]}`, flood: burstResult{answered: 100}},
		{name: "a configured secondary", extra: `, "reverse_zones": {"peers": ["127.0.0.1:5300"]}`, flood: burstResult{answered: 100}},
		{name: "prefix /32", extra: `, "rrl": {"ipv4_prefix_length": 32}`, flood: burstResult{answered: 20, truncated: 40, lost: 40}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			addr, s := serve(t, testConfig(t, tc.extra), testStore(t, queryZones), Options{Clock: clock})
			if got := burst(t, "127.0.0.1", addr, "web.example.test.", 100); got != tc.flood {
				t.Fatalf("flood from 127.0.0.1: %+v, want %+v", got, tc.flood)
			}
			if got := s.RateLimitCounts(); got.Dropped != uint64(tc.flood.lost) || got.Slipped != uint64(tc.flood.truncated) {
				t.Errorf("counted %+v for %+v", got, tc.flood)
			}
			if got := burst(t, "127.0.1.1", addr, "web.example.test.", 5); got.answered != 5 {
				t.Errorf("another /24 during the flood: %+v, want 5 answered", got)
			}
			if got := burst(t, "127.0.0.1", addr, "nx.example.test.", 5); got.answered != 5 {
				t.Errorf("NXDOMAIN to the flooding /24: %+v, want 5 answered (a bucket of its own)", got)
			}
			m := new(dns.Msg).SetQuestion("web.example.test.", dns.TypeA)
			if r := exchange(t, "tcp", addr, m); r.Rcode != dns.RcodeSuccess || len(r.Answer) != 2 {
				t.Errorf("over TCP during the flood: %v", r)
			}
		})
	}
	t.Run("prefix /32 separates 127.0.0.2", func(t *testing.T) {
		addr, _ := serve(t, testConfig(t, `, "rrl": {"ipv4_prefix_length": 32}`), testStore(t, queryZones), Options{Clock: clock})
		burst(t, "127.0.0.1", addr, "web.example.test.", 40)
		if got := burst(t, "127.0.0.2", addr, "web.example.test.", 5); got.answered != 5 {
			t.Errorf("127.0.0.2 during a flood from 127.0.0.1 with /32 prefixes: %+v", got)
		}
	})
	t.Run("same /24", func(t *testing.T) {
		addr, _ := serve(t, testConfig(t, ""), testStore(t, queryZones), Options{Clock: clock})
		burst(t, "127.0.0.1", addr, "web.example.test.", 40)
		if got := burst(t, "127.0.0.2", addr, "web.example.test.", 5); got.answered != 0 {
			t.Errorf("127.0.0.2, in the flooding /24: %+v, want nothing answered", got)
		}
	})
}

// TestRateLimitWindow: answers sent while limited still count, so a
// prefix that keeps flooding stays limited; once it stops it is answered
// again after at most the window.
func TestRateLimitWindow(t *testing.T) {
	l := newLimiter(schema.RRLConfig{ResponsesPerSecond: 10, Window: 5 * time.Second, Slip: 2,
		IPv4PrefixLength: 24, IPv6PrefixLength: 56, TableSize: 1024})
	client := netip.MustParseAddr("192.0.2.7")
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	sent := func(n int, step time.Duration) int {
		ok := 0
		for range n {
			if l.take(client, kindAnswer, now) == send {
				ok++
			}
			now = now.Add(step)
		}
		return ok
	}
	steps := []struct {
		name  string
		pause time.Duration // before the queries
		n     int
		step  time.Duration
		want  int
	}{
		{name: "a burst of one second's worth", n: 10, want: 10},
		{name: "beyond it", n: 10, want: 0},
		{name: "a flood at 100/s for 10 s", n: 1000, step: 10 * time.Millisecond, want: 0},
		{name: "after 3 s of quiet, still in debt", pause: 3 * time.Second, n: 1, want: 0},
		{name: "after the window", pause: 5 * time.Second, n: 10, want: 10},
		{name: "within the rate", pause: time.Second, n: 100, step: 100 * time.Millisecond, want: 100},
	}
	for _, st := range steps {
		now = now.Add(st.pause)
		if got := sent(st.n, st.step); got != st.want {
			t.Fatalf("%s: %d of %d answered, want %d", st.name, got, st.n, st.want)
		}
	}
}

// TestRateLimitTableBounded: a flood from ever new prefixes (a spoofer's)
// keeps the table at its size, evicting idle buckets first.
func TestRateLimitTableBounded(t *testing.T) {
	l := newLimiter(schema.RRLConfig{ResponsesPerSecond: 20, Window: 15 * time.Second, Slip: 2,
		IPv4PrefixLength: 24, IPv6PrefixLength: 56, TableSize: 1024})
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	for i := range 100_000 {
		a := netip.AddrFrom4([4]byte{10, byte(i >> 16), byte(i >> 8), byte(i)})
		l.take(a, kindAnswer, now)
		l.take(netip.AddrFrom16([16]byte{0x20, 0x01, 0x0d, 0xb8, byte(i >> 16), byte(i >> 8), byte(i)}), kindError, now)
	}
	if n := l.size(); n > 1024 {
		t.Fatalf("%d buckets, want at most 1024", n)
	}
}

// TestRateLimitIPv6Prefix: IPv6 clients are grouped by /56 by default.
func TestRateLimitIPv6Prefix(t *testing.T) {
	l := newLimiter(schema.RRLConfig{ResponsesPerSecond: 1, Window: time.Second, IPv4PrefixLength: 24,
		IPv6PrefixLength: 56, TableSize: 1024})
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	cases := []struct {
		addr string
		want verdict
	}{
		{"2001:db8:0:100::1", send},
		{"2001:db8:0:1ff::2", drop}, // the same /56
		{"2001:db8:0:200::1", send}, // the next /56
		{"192.0.2.1", send},
		{"::ffff:192.0.2.2", send}, // mapped addresses count as IPv4: a /24, the same
	}
	for _, tc := range cases {
		a := netip.MustParseAddr(tc.addr)
		if tc.addr == "::ffff:192.0.2.2" {
			a = a.Unmap()
			tc.want = drop
		}
		if got := l.take(a, kindAnswer, now); got != tc.want {
			t.Errorf("%s: verdict %d, want %d", tc.addr, got, tc.want)
		}
	}
}

// BenchmarkRateLimit measures what rate limiting adds to one answer: one
// client (one bucket, found), and clients from ever new prefixes (a new
// bucket each, evicting once the table is full).
func BenchmarkRateLimit(b *testing.B) {
	for _, bc := range []struct {
		name   string
		client func(i int) netip.Addr
	}{
		{"one client", func(int) netip.Addr { return netip.MustParseAddr("192.0.2.7") }},
		{"new prefixes", func(i int) netip.Addr { return netip.AddrFrom4([4]byte{10, byte(i >> 16), byte(i >> 8), 1}) }},
	} {
		b.Run(bc.name, func(b *testing.B) {
			l := newLimiter(schema.RRLConfig{ResponsesPerSecond: 20, Window: 15 * time.Second, Slip: 2,
				IPv4PrefixLength: 24, IPv6PrefixLength: 56, TableSize: 65536})
			now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
			b.ReportAllocs()
			for i := 0; b.Loop(); i++ {
				l.take(bc.client(i), kindAnswer, now.Add(time.Duration(i)*time.Millisecond))
			}
		})
	}
}
