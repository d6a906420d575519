package xfr

import (
	"context"
	"fmt"
	"net"
	"testing"

	"github.com/miekg/dns"

	"github.com/cnsd/cnsd/xfr/secondarytest"
)

// bigZone holds a name with so many addresses that its answer does not
// fit in 512 octets.
func bigZone() map[string][]string {
	var recs []string
	for i := range 100 {
		recs = append(recs, fmt.Sprintf("big A 10.0.%d.%d", i/250, i%250+1))
	}
	return map[string][]string{"example.test.": recs}
}

func TestQuerySize(t *testing.T) {
	s := New(testConfig(t, ""), testStore(t, bigZone()), Options{}, nil)
	udp := &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 5300}
	tcp := &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 5300}
	cases := []struct {
		name    string
		remote  net.Addr
		edns    uint16
		tc      bool
		answers int
		maxWire int
	}{
		{name: "UDP without EDNS0", remote: udp, tc: true, maxWire: 512},
		{name: "UDP with a small EDNS0 size", remote: udp, edns: 1000, tc: true, maxWire: 1000},
		{name: "UDP, client 4096: 1232 at most", remote: udp, edns: 4096, tc: true, maxWire: 1232},
		{name: "EDNS0 size below 512", remote: udp, edns: 100, tc: true, maxWire: 512},
		{name: "TCP", remote: tcp, answers: 100, maxWire: dns.MaxMsgSize},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := new(dns.Msg)
			r.SetQuestion("big.example.test.", dns.TypeA)
			if tc.edns > 0 {
				r.SetEdns0(tc.edns, false)
			}
			w := &recorder{remote: tc.remote}
			s.ServeDNS(w, r)
			m := w.msg
			if m.Truncated != tc.tc || w.wire > tc.maxWire {
				t.Fatalf("TC %v, %d octets; want TC %v, at most %d octets", m.Truncated, w.wire, tc.tc, tc.maxWire)
			}
			if !tc.tc && len(m.Answer) != tc.answers {
				t.Fatalf("%d answers, want %d", len(m.Answer), tc.answers)
			}
			if (tc.edns > 0) != (m.IsEdns0() != nil) {
				t.Fatalf("EDNS0 in answer %v, in question %v", m.IsEdns0() != nil, tc.edns > 0)
			}
		})
	}
}

// TestQueryOverSockets asks a running server over real UDP and TCP: a
// truncated UDP answer is complete over TCP.
func TestQueryOverSockets(t *testing.T) {
	addr, s := serve(t, testConfig(t, ""), testStore(t, bigZone()), Options{})
	r := new(dns.Msg)
	r.SetQuestion("big.example.test.", dns.TypeA)
	m := exchange(t, "udp", addr, r)
	if !m.Truncated {
		t.Fatalf("UDP answer of %d records not truncated", len(m.Answer))
	}
	m = exchange(t, "tcp", addr, r)
	if m.Truncated || len(m.Answer) != 100 || !m.Authoritative {
		t.Fatalf("TCP answer: TC %v, %d records, AA %v; want the 100 records", m.Truncated, len(m.Answer), m.Authoritative)
	}
	if got := s.QueryCounts()["NOERROR"]; got != 2 {
		t.Fatalf("NOERROR count %d, want 2", got)
	}
}

// exchange sends r and waits for the answer; the server is started
// before, so the first try may race its goroutines: retry a few times.
func exchange(t *testing.T, network, addr string, r *dns.Msg) *dns.Msg {
	t.Helper()
	c := &dns.Client{Net: network}
	var err error
	for range 20 {
		var m *dns.Msg
		if m, _, err = c.Exchange(r, addr); err == nil {
			return m
		}
	}
	t.Fatalf("%s query to %s: %v", network, addr, err)
	return nil
}

// TestRunStopsAtOnce: a server stopped right after it starts returns,
// even before its sockets have started serving.
func TestRunStopsAtOnce(t *testing.T) {
	for range 50 {
		pc, l := secondarytest.ListenPair(t)
		s := New(testConfig(t, ""), testStore(t, nil), Options{PacketConns: []net.PacketConn{pc}, Listeners: []net.Listener{l}}, nil)
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		if err := s.Run(ctx); err != nil {
			t.Fatalf("Run: %v", err)
		}
	}
}
