package xfr

import (
	"bytes"
	"context"
	"fmt"
	"hash/maphash"
	"net"
	"strings"
	"testing"

	"github.com/miekg/dns"

	"github.com/cnsd/cnsd/store"
)

// cacheWriter is a UDP ResponseWriter as udpWriter is to the handler:
// it packs the same way, checks TSIG the same way and offers the answer
// to the cache when q is set.
type cacheWriter struct {
	tsig tsigState
	sent []byte
	q    *quickQuery
	st   *settings
}

func (w *cacheWriter) LocalAddr() net.Addr { return &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 53} }
func (w *cacheWriter) RemoteAddr() net.Addr {
	return &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 5300}
}
func (w *cacheWriter) WriteMsg(m *dns.Msg) error {
	b, err := w.tsig.pack(m, nil)
	if err != nil {
		return err
	}
	_, err = w.Write(b)
	return err
}
func (w *cacheWriter) Write(b []byte) (int, error) {
	w.sent = append([]byte(nil), b...)
	return len(b), nil
}
func (w *cacheWriter) Close() error          { return nil }
func (w *cacheWriter) TsigStatus() error     { return w.tsig.status }
func (w *cacheWriter) TsigTimersOnly(b bool) { w.tsig.timersOnly = b }
func (w *cacheWriter) Hijack()               {}
func (w *cacheWriter) fill(st *settings) (*quickQuery, []byte) {
	if w.q == nil || w.st != st {
		return nil, nil
	}
	return w.q, w.sent
}

// fullPath answers pkt as a UDP worker does on a cache miss, letting the
// answer fill the cache when fill is set; nil when nothing is sent.
func fullPath(s *Server, pkt []byte, fill bool) []byte {
	pkt = append([]byte(nil), pkt...)
	w := &cacheWriter{st: s.settings()}
	if q := new(quickQuery); fill && w.st.parseQuick(pkt, 0, q) {
		w.q = q
	}
	r, raw := request(pkt)
	if r == nil {
		return nil
	}
	w.tsig.verify(tsigProvider{s}, raw, r)
	s.ServeDNS(w, r)
	return w.sent
}

// fastPath answers pkt from the cache alone; ok is false on a miss.
func fastPath(s *Server, pkt []byte) (ans []byte, ok bool) {
	st := s.settings()
	var q quickQuery
	if !st.parseQuick(pkt, 0, &q) {
		return nil, false
	}
	ans, _, ok = s.cached(st, &q, pkt, nil)
	return ans, ok
}

func packQuery(t testing.TB, id uint16, name string, qtype uint16, edns int, do, rd, cd bool) []byte {
	t.Helper()
	m := new(dns.Msg).SetQuestion(name, qtype)
	m.Id, m.RecursionDesired, m.CheckingDisabled = id, rd, cd
	if edns > 0 {
		m.SetEdns0(uint16(edns), do)
	}
	b, err := m.Pack()
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// mixedCase spells name with every other letter upper-cased.
func mixedCase(name string) string {
	b := []byte(name)
	for i, c := range b {
		if i%2 == 0 && c >= 'a' && c <= 'z' {
			b[i] = c - 'a' + 'A'
		}
	}
	return string(b)
}

// TestAnswerCacheHit: a hit is the full path's answer to the same
// request, byte for byte, ID, RD, CD and the question's spelling
// included; lower-case spellings always hit once cached, others when
// the entry serves any case, and the first answer echoes the question.
func TestAnswerCacheHit(t *testing.T) {
	s := New(testConfig(t, noRRL), testStore(t, queryZones), Options{}, nil)
	for _, tc := range []struct {
		name    string
		qname   string
		qtype   uint16
		edns    int
		do      bool
		anyCase bool // mixed-case spellings hit too
	}{
		{"A", "web.example.test.", dns.TypeA, 0, false, true},
		{"A EDNS DO", "web.example.test.", dns.TypeA, 1232, true, true},
		{"AAAA", "web.example.test.", dns.TypeAAAA, 4096, false, true},
		{"TXT", "web.example.test.", dns.TypeTXT, 1232, false, true},
		{"deep", "a.b.c.example.test.", dns.TypeA, 1232, false, true},
		{"CNAME chain", "chain.example.test.", dns.TypeA, 1232, false, false},
		{"CNAME out", "out.example.test.", dns.TypeA, 0, false, false},
		{"SRV", "_http._tcp.svc.example.test.", dns.TypeSRV, 1232, false, true},
		{"NXDOMAIN", "nope.example.test.", dns.TypeA, 1232, false, false},
		{"NODATA", "web.example.test.", dns.TypeMX, 0, false, false},
		{"sub zone", "x.sub.example.test.", dns.TypeA, 1232, false, true},
		{"PTR", "1.2.0.192.in-addr.arpa.", dns.TypePTR, 1232, false, true},
		{"small buffer", "web.example.test.", dns.TypeA, 100, false, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fill := packQuery(t, 1, tc.qname, tc.qtype, tc.edns, tc.do, true, false)
			if _, ok := fastPath(s, fill); ok {
				t.Fatal("hit before the answer was cached")
			}
			first := fullPath(s, fill, true)
			// The first request spelled otherwise misses, and finds out
			// which spellings the entry serves.
			other := packQuery(t, 99, mixedCase(tc.qname), tc.qtype, tc.edns, tc.do, true, false)
			if _, ok := fastPath(s, other); ok {
				t.Fatal("hit before the entry's spellings were known")
			}
			fullPath(s, other, true)
			for i, spelling := range []string{tc.qname, strings.ToUpper(tc.qname), mixedCase(tc.qname)} {
				for _, flags := range [][2]bool{{true, false}, {false, true}} {
					req := packQuery(t, uint16(100+i), spelling, tc.qtype, tc.edns, tc.do, flags[0], flags[1])
					want := fullPath(s, req, false)
					got, ok := fastPath(s, req)
					if wantHit := i == 0 || tc.anyCase; ok != wantHit {
						t.Fatalf("%s rd %v cd %v: hit %v, want %v", spelling, flags[0], flags[1], ok, wantHit)
					}
					if !ok {
						continue
					}
					if !bytes.Equal(got, want) {
						t.Fatalf("%s: hit\n%x\nfull path\n%x", spelling, got, want)
					}
					m := new(dns.Msg)
					if err := m.Unpack(got); err != nil {
						t.Fatal(err)
					}
					if m.Question[0].Name != spelling || len(m.Answer) > 0 && m.Answer[0].Header().Name != spelling {
						t.Errorf("%s: question %s, first answer %v", spelling, m.Question[0].Name, m.Answer)
					}
				}
			}
			if len(first) < headerLen {
				t.Fatalf("no answer to the filling request: %x", first)
			}
		})
	}
}

// TestAnswerCacheDeclines: what the cache does not take goes the full
// path, and a refused or failed answer is not kept.
func TestAnswerCacheDeclines(t *testing.T) {
	s := New(testConfig(t, noRRL), testStore(t, queryZones), Options{}, nil)
	for _, tc := range []struct {
		name string
		pkt  []byte
	}{
		{"SOA", packQuery(t, 1, "example.test.", dns.TypeSOA, 0, false, false, false)},
		{"ANY", packQuery(t, 1, "example.test.", dns.TypeANY, 0, false, false, false)},
		{"outside every zone", packQuery(t, 1, "www.elsewhere.test.", dns.TypeA, 0, false, false, false)},
		{"zone not in the store", packQuery(t, 1, "a.empty.test.", dns.TypeA, 0, false, false, false)},
		{"EDNS version 1", func() []byte {
			b := packQuery(t, 1, "web.example.test.", dns.TypeA, 1232, false, false, false)
			b[len(b)-5] = 1
			return b
		}()},
		{"EDNS option", func() []byte {
			m := new(dns.Msg).SetQuestion("web.example.test.", dns.TypeA)
			m.SetEdns0(1232, false)
			m.IsEdns0().Option = []dns.EDNS0{&dns.EDNS0_TCP_KEEPALIVE{Code: dns.EDNS0TCPKEEPALIVE}}
			b, _ := m.Pack()
			return b
		}()},
		{"octet after the question", append(packQuery(t, 1, "web.example.test.", dns.TypeA, 0, false, false, false), 0)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fullPath(s, tc.pkt, true)
			if _, ok := fastPath(s, tc.pkt); ok {
				t.Error("answered from the cache")
			}
		})
	}
}

// TestAnswerCacheSerial: a commit makes the next query miss, and the
// answer after it carries the new serial.
func TestAnswerCacheSerial(t *testing.T) {
	src := testStore(t, queryZones)
	s := New(testConfig(t, noRRL), src, Options{}, nil)
	nx := packQuery(t, 1, "new.example.test.", dns.TypeA, 1232, false, false, false)
	fullPath(s, nx, true)
	before, ok := fastPath(s, nx)
	if !ok {
		t.Fatal("no hit after the answer was cached")
	}
	recs := []store.Record{rec("new.example.test.", "A", "192.0.2.77")}
	if _, err := src.CommitSource(context.Background(), "other", map[string][]store.Record{"example.test.": recs}); err != nil {
		t.Fatal(err)
	}
	if got, ok := fastPath(s, nx); ok {
		t.Fatalf("answered from the old snapshot's entry: %x", got)
	}
	after := fullPath(s, nx, true)
	if bytes.Equal(before, after) {
		t.Fatal("the same answer after a commit")
	}
	got, ok := fastPath(s, nx)
	if !ok || !bytes.Equal(got, after) {
		t.Fatalf("after the commit: hit %v %x, want %x", ok, got, after)
	}
	m := new(dns.Msg)
	if err := m.Unpack(got); err != nil || m.Rcode != dns.RcodeSuccess || len(m.Answer) != 1 {
		t.Fatalf("answer after the commit: %v %v", m, err)
	}
}

// TestAnswerCacheConfig: SetConfig empties the cache; an answer that
// depends on the configuration (the TTL) is answered anew.
func TestAnswerCacheConfig(t *testing.T) {
	s := New(testConfig(t, noRRL), testStore(t, queryZones), Options{}, nil)
	q := packQuery(t, 1, "web.example.test.", dns.TypeA, 0, false, false, false)
	before := fullPath(s, q, true)
	if _, ok := fastPath(s, q); !ok {
		t.Fatal("no hit after the answer was cached")
	}
	cfg := testConfig(t, noRRL)
	cfg.TTL.Record *= 2
	s.SetConfig(cfg)
	if _, ok := fastPath(s, q); ok {
		t.Fatal("answered from the former configuration's cache")
	}
	if after := fullPath(s, q, true); bytes.Equal(before, after) {
		t.Fatal("the TTL did not change")
	}
}

// TestAnswerCacheTruncated: an answer cut to the client's buffer (TC)
// is cached per size: the same question with a larger buffer is not
// answered from it.
func TestAnswerCacheTruncated(t *testing.T) {
	var big []string
	for i := range 40 {
		big = append(big, fmt.Sprintf("many A 192.0.2.%d", i+1))
	}
	s := New(testConfig(t, noRRL), testStore(t, map[string][]string{"example.test.": big}), Options{}, nil)
	small := packQuery(t, 1, "many.example.test.", dns.TypeA, 0, false, false, false)
	large := packQuery(t, 2, "many.example.test.", dns.TypeA, 1232, false, false, false)
	fullPath(s, small, true)
	got, ok := fastPath(s, small)
	if !ok || !bytes.Equal(got, fullPath(s, small, false)) {
		t.Fatalf("truncated answer: hit %v %x", ok, got)
	}
	if got[2]&0x02 == 0 {
		t.Error("TC not set in the cached answer to a 512-octet client")
	}
	if _, ok := fastPath(s, large); ok {
		t.Fatal("a 1232-octet client answered from the 512-octet entry")
	}
	fullPath(s, large, true)
	if got, ok := fastPath(s, large); !ok || got[2]&0x02 != 0 {
		t.Fatalf("large buffer: hit %v, TC %v", ok, got[2]&0x02 != 0)
	}
}

// TestAnswerCacheBound: the cache holds no more entries and octets than
// its bounds however many answers are put.
func TestAnswerCacheBound(t *testing.T) {
	c := newAnswerCache()
	answer := make([]byte, 300)
	for i := range 2 * answerCacheEntries {
		c.put(fmt.Appendf(nil, "name%d", i), &answerEntry{msg: answer, qname: "x"})
		if i%4096 == 0 {
			if n, b := c.len(); n > answerCacheEntries || b > answerCacheBytes {
				t.Fatalf("after %d puts: %d entries, %d octets", i+1, n, b)
			}
		}
	}
	n, _ := c.len()
	if n < answerCacheEntries/2 {
		t.Errorf("%d entries kept of at most %d", n, answerCacheEntries)
	}
	large := make([]byte, 4096)
	for i := range answerCacheBytes / 4096 * 2 {
		c.put(fmt.Appendf(nil, "large%d", i), &answerEntry{msg: large, qname: "x"})
	}
	if n, b := c.len(); n > answerCacheEntries || b > answerCacheBytes {
		t.Fatalf("%d entries, %d octets", n, b)
	}
}

// TestSlipAnswer: what rate limiting sends for a cached answer is what
// it sends on the full path.
func TestSlipAnswer(t *testing.T) {
	for _, pkt := range [][]byte{
		packQuery(t, 7, "Web.Example.test.", dns.TypeA, 1232, true, true, true),
		packQuery(t, 8, "web.example.test.", dns.TypeTXT, 0, false, false, false),
	} {
		var q quickQuery
		st := newSettings(testConfig(t, ""))
		if !st.parseQuick(pkt, 0, &q) {
			t.Fatal("not read")
		}
		r, _ := request(pkt)
		m := new(dns.Msg)
		m.SetReply(r)
		m.Truncated = true
		want, _ := m.Pack()
		if got := slipAnswer(pkt, &q, nil); !bytes.Equal(got, want) {
			t.Errorf("slip %x, want %x", got, want)
		}
	}
}

// TestUDPAnswerCache: over a socket, a repeated query is answered the
// same (but for its ID), counted each time, and a commit is seen at once.
func TestUDPAnswerCache(t *testing.T) {
	src := testStore(t, queryZones)
	addr, s := serve(t, testConfig(t, ""), src, Options{})
	c, err := net.Dial("udp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	ask := func(id uint16, name string) []byte {
		t.Helper()
		if _, err := c.Write(packQuery(t, id, name, dns.TypeA, 1232, false, false, false)); err != nil {
			t.Fatal(err)
		}
		buf := make([]byte, 1500)
		n, err := c.Read(buf)
		if err != nil {
			t.Fatal(err)
		}
		if got := uint16(buf[0])<<8 | uint16(buf[1]); got != id {
			t.Fatalf("answer ID %d, want %d", got, id)
		}
		return buf[2:n]
	}
	first := ask(1, "later.example.test.")
	for id := uint16(2); id < 5; id++ {
		if again := ask(id, "later.example.test."); !bytes.Equal(again, first) {
			t.Fatalf("answer %d differs: %x, first %x", id, again, first)
		}
	}
	if n := s.QueryCounts()["NXDOMAIN"]; n != 4 {
		t.Errorf("NXDOMAIN counted %d times, want 4", n)
	}
	recs := []store.Record{rec("later.example.test.", "A", "192.0.2.88")}
	if _, err := src.CommitSource(context.Background(), "other", map[string][]store.Record{"example.test.": recs}); err != nil {
		t.Fatal(err)
	}
	m := new(dns.Msg)
	if err := m.Unpack(append([]byte{0, 9}, ask(9, "later.example.test.")...)); err != nil {
		t.Fatal(err)
	}
	if m.Rcode != dns.RcodeSuccess || len(m.Answer) != 1 {
		t.Fatalf("after the commit: %v", m)
	}
}

// TestTCPAnswerCache: over TCP a repeated query is answered from the
// cache with what the full path sent the first time, and counted.
func TestTCPAnswerCache(t *testing.T) {
	addr, s := serve(t, testConfig(t, ""), testStore(t, queryZones), Options{})
	c, err := dns.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	var first []byte
	for id := uint16(1); id < 5; id++ {
		q := new(dns.Msg).SetQuestion("web.example.test.", dns.TypeA)
		q.Id = id
		q.SetEdns0(1232, false)
		if err := c.WriteMsg(q); err != nil {
			t.Fatal(err)
		}
		b, err := c.ReadMsgHeader(nil)
		if err != nil {
			t.Fatal(err)
		}
		if got := uint16(b[0])<<8 | uint16(b[1]); got != id {
			t.Fatalf("answer ID %d, want %d", got, id)
		}
		if first == nil {
			first = append([]byte(nil), b[2:]...)
		} else if !bytes.Equal(b[2:], first) {
			t.Fatalf("answer %d: %x, first %x", id, b[2:], first)
		}
	}
	if n := s.QueryCounts()["NOERROR"]; n != 4 {
		t.Errorf("NOERROR counted %d times, want 4", n)
	}
	if e, _ := s.settings().answers.len(); e != 1 {
		t.Errorf("%d entries cached, want 1", e)
	}
}

// TestAnswerCacheReverseTakesOver: a reverse zone the store creates
// below one that answered a question takes the question over; the
// cached answer from the zone above is not served again.
func TestAnswerCacheReverseTakesOver(t *testing.T) {
	src := testStore(t, queryZones)
	s := New(testConfig(t, noRRL), src, Options{}, nil)
	q := packQuery(t, 1, "5.3.2.0.192.in-addr.arpa.", dns.TypePTR, 1232, false, false, false)
	fullPath(s, q, true)
	if _, ok := fastPath(s, q); !ok {
		t.Fatal("no hit after the NXDOMAIN was cached")
	}
	recs := []store.Record{rec("5.3.2.0.192.in-addr.arpa.", "PTR", "web.example.test.")}
	if _, err := src.CommitSource(context.Background(), "other", map[string][]store.Record{"3.2.0.192.in-addr.arpa.": recs}); err != nil {
		t.Fatal(err)
	}
	if got, ok := fastPath(s, q); ok {
		t.Fatalf("answered from the zone above: %x", got)
	}
	m := new(dns.Msg)
	if err := m.Unpack(fullPath(s, q, true)); err != nil || m.Rcode != dns.RcodeSuccess || len(m.Answer) != 1 {
		t.Fatalf("answer from the new zone: %v %v", m, err)
	}
}

// TestAnswerCacheKeyChecked: an entry is found by its key's hash but
// served only for its own key (two keys of one hash), and holds a copy
// of the answer put, not the caller's buffer.
func TestAnswerCacheKeyChecked(t *testing.T) {
	c := newAnswerCache()
	answer := []byte("the answer")
	c.put([]byte("key one"), &answerEntry{msg: answer, qname: "x"})
	copy(answer, "overwrite!")
	e := c.get([]byte("key one"))
	if e == nil || string(e.msg) != "the answer" || string(e.key) != "key one" {
		t.Fatalf("get after put: %+v", e)
	}
	other := []byte("key two")
	h := maphash.Bytes(c.seed, other)
	sh := c.shard(h)
	sh.entries[h] = e // as if the two keys hashed alike
	if got := c.get(other); got != nil {
		t.Errorf("key two found the entry of key one: %q", got.key)
	}
}
