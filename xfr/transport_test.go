package xfr

import (
	"bufio"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/miekg/dns"

	"github.com/cnsd/cnsd/store"
	"github.com/cnsd/cnsd/xfr/secondarytest"
)

// transportStore is a zone of 1,000 names with an A record each, and
// big.example.test with TXT records that make a 40 KB answer.
func transportStore(t testing.TB) *store.Store {
	t.Helper()
	recs := make([]store.Record, 0, 1200)
	for i := range 1000 {
		recs = append(recs, rec(fmt.Sprintf("vm%04d.example.test.", i), "A", fmt.Sprintf("10.0.%d.%d", i>>8, i&255)))
	}
	for i := range 200 {
		recs = append(recs, rec("big.example.test.", "TXT", `"`+fmt.Sprintf("%03d", i)+strings.Repeat("x", 190)+`"`))
	}
	src := testStore(t, nil)
	if _, err := src.CommitSource(context.Background(), "test", map[string][]store.Record{"example.test.": recs}); err != nil {
		t.Fatal(err)
	}
	return src
}

// startTransport serves src with the test configuration plus extra on
// 127.0.0.1, after prep (which may set test hooks) has seen the server,
// and returns its address (the same port for UDP and TCP).
func startTransport(t testing.TB, extra string, src Source, opts Options, prep func(*Server)) (string, *Server) {
	t.Helper()
	pc, l := secondarytest.ListenPair(t)
	opts.PacketConns, opts.Listeners = []net.PacketConn{pc}, []net.Listener{l}
	s := New(testConfig(t, `, "rrl": {"disabled": true}`+extra), src, opts, nil)
	if prep != nil {
		prep(s)
	}
	runServer(t, s)
	return pc.LocalAddr().String(), s
}

// writeTCP sends m on c with its length first.
func writeTCP(t testing.TB, c net.Conn, m *dns.Msg) {
	t.Helper()
	b, err := m.Pack()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Write(binary.BigEndian.AppendUint16(nil, uint16(len(b)))); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Write(b); err != nil {
		t.Fatal(err)
	}
}

// readTCP reads one message from r.
func readTCP(r io.Reader) (*dns.Msg, error) {
	var hdr [2]byte
	if _, err := io.ReadFull(r, hdr[:]); err != nil {
		return nil, err
	}
	b := make([]byte, binary.BigEndian.Uint16(hdr[:]))
	if _, err := io.ReadFull(r, b); err != nil {
		return nil, err
	}
	m := new(dns.Msg)
	return m, m.Unpack(b)
}

func query(name string, id uint16) *dns.Msg {
	m := new(dns.Msg).SetQuestion(name, dns.TypeA)
	m.Id = id
	return m
}

func dialTCP(t testing.TB, addr string) net.Conn {
	t.Helper()
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// TestTCPPipelining sends 1,000 queries on one connection without
// waiting and expects 1,000 right answers, matched by ID.
func TestTCPPipelining(t *testing.T) {
	addr, _ := startTransport(t, "", transportStore(t), Options{}, nil)
	c := dialTCP(t, addr)
	const n = 1000
	go func() {
		bw := bufio.NewWriter(c)
		for i := range n {
			b, _ := query(fmt.Sprintf("vm%04d.example.test.", i), uint16(i)).Pack()
			bw.Write(binary.BigEndian.AppendUint16(nil, uint16(len(b))))
			bw.Write(b)
		}
		bw.Flush()
	}()
	_ = c.SetReadDeadline(time.Now().Add(20 * time.Second))
	br := bufio.NewReader(c)
	seen := make([]bool, n)
	for range n {
		m, err := readTCP(br)
		if err != nil {
			t.Fatalf("after %d answers: %v", countTrue(seen), err)
		}
		i := int(m.Id)
		want := fmt.Sprintf("10.0.%d.%d", i>>8, i&255)
		if i >= n || seen[i] || len(m.Answer) != 1 || m.Answer[0].(*dns.A).A.String() != want {
			t.Fatalf("answer %d: %v", i, m)
		}
		seen[i] = true
	}
}

// TestTCPPipelinedHitsWrittenTogether: answers the cache holds for
// queries already read leave in few writes, not one each, and every one
// arrives.
func TestTCPPipelinedHitsWrittenTogether(t *testing.T) {
	var mu sync.Mutex
	var writes, answers int
	addr, _ := startTransport(t, "", transportStore(t), Options{}, func(s *Server) {
		s.tcpFlushHook = func(n int) { mu.Lock(); writes++; answers += n; mu.Unlock() }
	})
	c := dialTCP(t, addr)
	_ = c.SetDeadline(time.Now().Add(20 * time.Second))
	br := bufio.NewReader(c)
	const n = 1000
	var all []byte
	for i := range n {
		b, _ := query(fmt.Sprintf("vm%04d.example.test.", i%100), uint16(i)).Pack()
		all = append(binary.BigEndian.AppendUint16(all, uint16(len(b))), b...)
	}
	for i := range 100 { // one at a time: each fills the cache
		writeTCP(t, c, query(fmt.Sprintf("vm%04d.example.test.", i), uint16(i)))
		if _, err := readTCP(br); err != nil {
			t.Fatal(err)
		}
	}
	mu.Lock()
	writes, answers = 0, 0
	mu.Unlock()
	if _, err := c.Write(all); err != nil {
		t.Fatal(err)
	}
	for i := range n {
		m, err := readTCP(br)
		if err != nil {
			t.Fatalf("after %d answers: %v", i, err)
		}
		j := int(m.Id) % 100
		if want := fmt.Sprintf("10.0.%d.%d", j>>8, j&255); len(m.Answer) != 1 || m.Answer[0].(*dns.A).A.String() != want {
			t.Fatalf("answer %d: %v", m.Id, m)
		}
	}
	mu.Lock()
	defer mu.Unlock()
	// The cache takes an answer just after it is written, so the last
	// priming query's entry may come too late for its ten repeats.
	if answers < n*9/10 || writes > n/4 {
		t.Errorf("%d answers from the cache in %d writes, want at least %d in at most %d", answers, writes, n*9/10, n/4)
	}
	t.Logf("%d answers in %d writes", answers, writes)
}

func countTrue(b []bool) int {
	n := 0
	for _, x := range b {
		if x {
			n++
		}
	}
	return n
}

// TestTCPStalledClient: a client that sends queries and never reads its
// answers holds up neither other connections nor the server; the write
// timeout closes its connection.
func TestTCPStalledClient(t *testing.T) {
	addr, s := startTransport(t, "", transportStore(t), Options{TCPWriteTimeout: 500 * time.Millisecond}, nil)
	stalled := dialTCP(t, addr)
	_ = stalled.(*net.TCPConn).SetReadBuffer(4096)
	big := new(dns.Msg).SetQuestion("big.example.test.", dns.TypeTXT)
	go func() {
		for range 500 { // 20 MB of answers
			b, _ := big.Pack()
			if _, err := stalled.Write(append(binary.BigEndian.AppendUint16(nil, uint16(len(b))), b...)); err != nil {
				return
			}
		}
	}()
	time.Sleep(200 * time.Millisecond) // the server is blocked writing to it by now
	other := dialTCP(t, addr)
	for i := range 20 {
		_ = other.SetDeadline(time.Now().Add(2 * time.Second))
		writeTCP(t, other, query(fmt.Sprintf("vm%04d.example.test.", i), uint16(i)))
		if m, err := readTCP(other); err != nil || m.Id != uint16(i) || len(m.Answer) != 1 {
			t.Fatalf("query %d on another connection: %v %v", i, m, err)
		}
	}
	deadline := time.Now().Add(5 * time.Second)
	for s.TransportCounts().TCPConnections > 1 {
		if time.Now().After(deadline) {
			t.Fatalf("the stalled connection is still open: %+v", s.TransportCounts())
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// TestTCPIdleTimeout: a connection with no query for the idle timeout is
// closed by the server, and not before.
func TestTCPIdleTimeout(t *testing.T) {
	addr, _ := startTransport(t, `, "dns": {"tcp_idle_timeout_seconds": 1}`, transportStore(t), Options{}, nil)
	c := dialTCP(t, addr)
	start := time.Now()
	for i := range 3 { // queries keep it open past the timeout
		writeTCP(t, c, query("vm0001.example.test.", uint16(i)))
		if _, err := readTCP(c); err != nil {
			t.Fatal(err)
		}
		time.Sleep(600 * time.Millisecond)
	}
	_ = c.SetReadDeadline(time.Now().Add(5 * time.Second))
	if _, err := readTCP(c); !errors.Is(err, io.EOF) {
		t.Fatalf("read on an idle connection: %v, want EOF", err)
	}
	if d := time.Since(start); d < 2*time.Second {
		t.Errorf("closed after %v, before a second had passed since the last answer", d)
	}
}

// TestTCPPerClientCap: a connection over the per-client cap closes that
// client's connection idle longest, not itself.
func TestTCPPerClientCap(t *testing.T) {
	addr, s := startTransport(t, `, "dns": {"tcp_max_connections_per_client": 2}`, transportStore(t), Options{}, nil)
	ask := func(c net.Conn, id uint16) error {
		_ = c.SetDeadline(time.Now().Add(2 * time.Second))
		writeTCP(t, c, query("vm0001.example.test.", id))
		_, err := readTCP(c)
		return err
	}
	oldest, newer := dialTCP(t, addr), dialTCP(t, addr)
	for i, c := range []net.Conn{oldest, newer} {
		if err := ask(c, uint16(i)); err != nil {
			t.Fatal(err)
		}
		time.Sleep(50 * time.Millisecond)
	}
	third := dialTCP(t, addr)
	if err := ask(third, 3); err != nil {
		t.Fatalf("the new connection: %v", err)
	}
	_ = oldest.SetReadDeadline(time.Now().Add(2 * time.Second))
	if _, err := readTCP(oldest); !errors.Is(err, io.EOF) {
		t.Errorf("the longest-idle connection: %v, want EOF", err)
	}
	if err := ask(newer, 4); err != nil {
		t.Errorf("the other connection: %v", err)
	}
	if tc := s.TransportCounts(); tc.TCPEvicted != 1 || tc.TCPConnections != 2 {
		t.Errorf("TransportCounts %+v, want 1 evicted, 2 open", tc)
	}
}

// TestTCPMaxQueries: with a query cap, every query read before it is
// answered, then the connection closes.
func TestTCPMaxQueries(t *testing.T) {
	addr, _ := startTransport(t, `, "dns": {"tcp_max_queries": 10}`, transportStore(t), Options{}, nil)
	c := dialTCP(t, addr)
	var all []byte
	for i := range 15 {
		b, _ := query(fmt.Sprintf("vm%04d.example.test.", i), uint16(i)).Pack()
		all = append(append(all, binary.BigEndian.AppendUint16(nil, uint16(len(b)))...), b...)
	}
	if _, err := c.Write(all); err != nil {
		t.Fatal(err)
	}
	_ = c.SetReadDeadline(time.Now().Add(5 * time.Second))
	got := map[uint16]bool{}
	for {
		m, err := readTCP(c)
		if err != nil {
			break
		}
		got[m.Id] = true
	}
	if len(got) != 10 {
		t.Errorf("got %d answers (%v), want 10", len(got), got)
	}
	for i := range uint16(10) {
		if !got[i] {
			t.Errorf("query %d unanswered", i)
		}
	}
}

// TestTCPKeepalive: an answer over TCP carries edns-tcp-keepalive with
// the idle timeout when the query did, and not otherwise (RFC 7828).
func TestTCPKeepalive(t *testing.T) {
	addr, _ := startTransport(t, `, "dns": {"tcp_idle_timeout_seconds": 25}`, transportStore(t), Options{}, nil)
	for _, tc := range []struct {
		name      string
		keepalive bool
		want      uint16
	}{
		{"asked", true, 250},
		{"not asked", false, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			q := query("vm0001.example.test.", 7).SetEdns0(1232, false)
			if tc.keepalive {
				o := q.IsEdns0()
				o.Option = append(o.Option, &dns.EDNS0_TCP_KEEPALIVE{Code: dns.EDNS0TCPKEEPALIVE})
			}
			c := &dns.Client{Net: "tcp", Timeout: 2 * time.Second}
			r, _, err := c.Exchange(q, addr)
			if err != nil {
				t.Fatal(err)
			}
			var got uint16
			found := false
			if o := r.IsEdns0(); o != nil {
				for _, opt := range o.Option {
					if k, ok := opt.(*dns.EDNS0_TCP_KEEPALIVE); ok {
						got, found = k.Timeout, true
					}
				}
			}
			if found != tc.keepalive || got != tc.want {
				t.Errorf("keepalive option %v %d, want %v %d", found, got, tc.keepalive, tc.want)
			}
		})
	}
}

// TestTransferStreamsAmidQueries: an AXFR pipelined between queries on
// one connection arrives whole and in order, its messages not mixed with
// the other answers.
func TestTransferStreamsAmidQueries(t *testing.T) {
	addr, _ := startTransport(t, `, "allow_transfer": ["127.0.0.1"]`, transportStore(t), Options{}, nil)
	c := dialTCP(t, addr)
	ax := new(dns.Msg).SetAxfr("example.test.")
	ax.Id = 5000
	for i := range 100 {
		if i == 50 {
			writeTCP(t, c, ax)
		}
		writeTCP(t, c, query(fmt.Sprintf("vm%04d.example.test.", i), uint16(i)))
	}
	_ = c.SetReadDeadline(time.Now().Add(10 * time.Second))
	br := bufio.NewReader(c)
	answers, soas, inTransfer, records := 0, 0, false, 0
	for answers < 100 || soas < 2 {
		m, err := readTCP(br)
		if err != nil {
			t.Fatalf("after %d answers, %d transfer records: %v", answers, records, err)
		}
		if m.Id != ax.Id {
			if inTransfer {
				t.Fatalf("answer %d between the messages of the transfer", m.Id)
			}
			answers++
			continue
		}
		for _, rr := range m.Answer {
			if rr.Header().Rrtype == dns.TypeSOA {
				soas++
				inTransfer = soas == 1
			}
			records++
		}
	}
	if records != 1000+200+4 { // the records, two NS, SOA first and last
		t.Errorf("transfer of %d records", records)
	}
}
