package knotbench

import (
	"encoding/binary"
	"errors"
	"fmt"
	"net"
	"sync/atomic"
	"time"

	"github.com/miekg/dns"
)

// Apex returns the SOA and NS records a server gives for Zone's apex.
func Apex(addr string) ([]dns.RR, error) {
	c := &dns.Client{Timeout: 2 * time.Second}
	var out []dns.RR
	for _, t := range []uint16{dns.TypeSOA, dns.TypeNS} {
		r, _, err := c.Exchange(new(dns.Msg).SetQuestion(Zone, t), addr)
		if err != nil {
			return nil, fmt.Errorf("apex %s: %w", dns.TypeToString[t], err)
		}
		if r.Rcode != dns.RcodeSuccess || len(r.Answer) == 0 {
			return nil, fmt.Errorf("apex %s: %s with %d answers", dns.TypeToString[t], dns.RcodeToString[r.Rcode], len(r.Answer))
		}
		out = append(out, r.Answer...)
	}
	return out, nil
}

// A Transfer is what one AXFR took on the wire, counted by the client.
type Transfer struct {
	Messages int
	Bytes    int64 // TCP payload received, length prefixes included
	Records  int
}

// AXFR transfers Zone from addr over TCP with a miekg/dns client and
// counts the messages, octets and records received. each, when not
// nil, sees every record.
func AXFR(addr string, each func(dns.RR)) (Transfer, error) {
	t, err := transfer(addr, new(dns.Msg).SetAxfr(Zone), each)
	if err != nil {
		return t, fmt.Errorf("axfr: %w", err)
	}
	return t, nil
}

// IXFR asks addr over TCP for the changes to Zone since serial, with a
// miekg/dns client, and counts as AXFR does.
func IXFR(addr string, serial uint32, each func(dns.RR)) (Transfer, error) {
	t, err := transfer(addr, new(dns.Msg).SetIxfr(Zone, serial, ".", "."), each)
	if err != nil {
		return t, fmt.Errorf("ixfr: %w", err)
	}
	return t, nil
}

func transfer(addr string, req *dns.Msg, each func(dns.RR)) (Transfer, error) {
	nc, err := net.DialTimeout("tcp", addr, 5*time.Second)
	if err != nil {
		return Transfer{}, err
	}
	cc := &countingConn{Conn: nc}
	tr := &dns.Transfer{Conn: &dns.Conn{Conn: cc}, ReadTimeout: 30 * time.Second}
	defer tr.Close()
	ch, err := tr.In(req, addr)
	if err != nil {
		return Transfer{}, err
	}
	var t Transfer
	for env := range ch {
		if env.Error != nil {
			err = errors.Join(err, env.Error)
			continue
		}
		t.Messages++
		t.Records += len(env.RR)
		if each != nil {
			for _, rr := range env.RR {
				each(rr)
			}
		}
	}
	t.Bytes = cc.read.Load()
	return t, err
}

type countingConn struct {
	net.Conn
	read atomic.Int64
}

func (c *countingConn) Read(p []byte) (int, error) {
	n, err := c.Conn.Read(p)
	c.read.Add(int64(n))
	return n, err
}

// A Query is a query in wire form and the rcode its answer must have.
type Query struct {
	Name  string
	Type  uint16
	Rcode int
	wire  []byte
}

// Queries returns count queries over the zone of n records, spread over
// its names: 40 % A and 20 % TXT of instance names, 10 % A of service
// names (several addresses), 10 % SRV, 20 % names that do not exist.
// Each carries EDNS0 with a 1232-octet buffer, as resolvers send.
func Queries(n, count int) []Query {
	insts := instances(n)
	out := make([]Query, 0, count)
	for k := range count {
		in := Nth(k * 7919 % insts)
		member := Nth(k * 7919 % insts / serviceEvery * serviceEvery)
		q := Query{Name: in.Name, Type: dns.TypeA, Rcode: dns.RcodeSuccess}
		switch k % 10 {
		case 4, 5:
			q.Type = dns.TypeTXT
		case 6:
			q.Name = member.Service
		case 7:
			q.Name, q.Type = "_http._tcp."+member.Service, dns.TypeSRV
		case 8, 9:
			q.Name, q.Rcode = "x"+in.Name, dns.RcodeNameError
		}
		m := new(dns.Msg).SetQuestion(q.Name, q.Type)
		m.SetEdns0(1232, false)
		m.RecursionDesired = false
		var err error
		if q.wire, err = m.Pack(); err != nil {
			panic(err) // generated names are valid
		}
		out = append(out, q)
	}
	return out
}

// instances is how many whole instances Records(n) holds.
func instances(n int) int {
	i := 0
	for used := 0; ; i++ {
		used += 2
		if Nth(i).Service != "" {
			used += 3
		}
		if used > n {
			return max(i, 1)
		}
	}
}

// A Querier sends queries over one UDP socket, one at a time.
type Querier struct {
	conn net.Conn
	id   uint16
	out  []byte
	in   []byte
}

// NewQuerier returns a Querier for the server at addr.
func NewQuerier(addr string) (*Querier, error) {
	c, err := net.Dial("udp", addr)
	if err != nil {
		return nil, fmt.Errorf("querier: %w", err)
	}
	return &Querier{conn: c, out: make([]byte, 512), in: make([]byte, 65535)}, nil
}

// ErrWrongAnswer is returned by Ask for an answer with another rcode than
// the query expects, or without records where some are expected.
var ErrWrongAnswer = errors.New("wrong answer")

// Ask sends q and waits up to timeout for its answer; answers to earlier
// queries that timed out are skipped.
func (c *Querier) Ask(q Query, timeout time.Duration) error {
	c.id++
	c.out = append(c.out[:0], q.wire...)
	binary.BigEndian.PutUint16(c.out, c.id)
	if _, err := c.conn.Write(c.out); err != nil {
		return err
	}
	if err := c.conn.SetReadDeadline(time.Now().Add(timeout)); err != nil {
		return err
	}
	for {
		n, err := c.conn.Read(c.in)
		if err != nil {
			return err
		}
		if n < 12 || binary.BigEndian.Uint16(c.in) != c.id {
			continue
		}
		rcode := int(c.in[3] & 0x0f)
		ancount := binary.BigEndian.Uint16(c.in[6:])
		if rcode != q.Rcode || (rcode == dns.RcodeSuccess && ancount == 0) {
			return fmt.Errorf("%w: %s %s: rcode %s, %d answers", ErrWrongAnswer,
				q.Name, dns.TypeToString[q.Type], dns.RcodeToString[rcode], ancount)
		}
		return nil
	}
}

// Close closes the socket.
func (c *Querier) Close() error { return c.conn.Close() }
