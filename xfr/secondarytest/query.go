package secondarytest

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/miekg/dns"
)

// Exchange sends one query for name and type (a name like "AAAA") to addr
// over UDP, again over TCP when the answer is truncated, and returns the
// response, whatever its rcode.
func Exchange(addr, name, qtype string, timeout time.Duration) (*dns.Msg, error) {
	t, ok := dns.StringToType[strings.ToUpper(qtype)]
	if !ok {
		return nil, fmt.Errorf("unknown query type %q", qtype)
	}
	m := new(dns.Msg)
	m.SetQuestion(fqdn(name), t)
	m.RecursionDesired = false
	c := &dns.Client{Net: "udp", Timeout: timeout}
	r, _, err := c.Exchange(m, addr)
	if err == nil && r.Truncated {
		c.Net = "tcp"
		r, _, err = c.Exchange(m, addr)
	}
	if err != nil {
		return nil, fmt.Errorf("query %s %s at %s: %w", name, qtype, addr, err)
	}
	return r, nil
}

func (s *Secondary) exchange(name, qtype string, timeout time.Duration) (*dns.Msg, error) {
	return Exchange(s.addr.String(), name, qtype, timeout)
}

// Query asks the secondary for name and type (a name like "AAAA"); a
// network error fails the test.
func (s *Secondary) Query(t testing.TB, name, qtype string) *dns.Msg {
	t.Helper()
	var r *dns.Msg
	var err error
	for range 3 { // UDP on a loaded machine may lose a packet
		if r, err = s.exchange(name, qtype, 2*time.Second); err == nil {
			return r
		}
	}
	t.Fatalf("secondarytest: %s: %v", s.kind, err)
	return nil
}

// Serial returns the SOA serial the secondary serves for zone; ok is
// false when it does not serve the zone (yet).
func (s *Secondary) Serial(zone string) (serial uint32, ok bool) {
	r, err := s.exchange(zone, "SOA", time.Second)
	if err != nil || r.Rcode != dns.RcodeSuccess || !r.Authoritative {
		return 0, false
	}
	for _, rr := range r.Answer {
		if soa, isSOA := rr.(*dns.SOA); isSOA && strings.EqualFold(soa.Hdr.Name, fqdn(zone)) {
			return soa.Serial, true
		}
	}
	return 0, false
}

// WaitSerial waits until the secondary serves zone at serial or a later
// one (RFC 1982) and returns the serial it serves. It fails the test,
// with the log, when that takes longer than timeout.
func (s *Secondary) WaitSerial(t testing.TB, zone string, serial uint32, timeout time.Duration) uint32 {
	t.Helper()
	var got uint32
	var ok bool
	deadline := time.Now().Add(timeout)
	for {
		if got, ok = s.Serial(zone); ok && !serialLess(got, serial) {
			return got
		}
		if time.Now().After(deadline) {
			break
		}
		s.pause(t, 20*time.Millisecond)
	}
	t.Fatalf("secondarytest: %s at %s does not serve %s at serial %d within %v (serving: %v, serial %d)\nlog:\n%s",
		s.kind, s.addr, zone, serial, timeout, ok, got, s.logTail())
	return 0
}

// WaitAnswer waits until the secondary's response to name and type
// satisfies cond, and returns it. It fails the test, with the log, when
// that takes longer than timeout.
func (s *Secondary) WaitAnswer(t testing.TB, name, qtype string, timeout time.Duration, cond func(*dns.Msg) bool) *dns.Msg {
	t.Helper()
	var r *dns.Msg
	deadline := time.Now().Add(timeout)
	for {
		var err error
		if r, err = s.exchange(name, qtype, time.Second); err == nil && cond(r) {
			return r
		}
		if time.Now().After(deadline) {
			break
		}
		s.pause(t, 50*time.Millisecond)
	}
	t.Fatalf("secondarytest: %s at %s: no satisfying answer to %s %s within %v; last:\n%v\nlog about %s:\n%s\nlog:\n%s",
		s.kind, s.addr, name, qtype, timeout, r, name, s.logAbout(name), s.logTail())
	return nil
}

// WaitLog waits until the log holds a line containing every one of
// parts, and returns that line.
func (s *Secondary) WaitLog(t testing.TB, timeout time.Duration, parts ...string) string {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		for line := range strings.Lines(s.Log()) {
			if containsAll(line, parts) {
				return strings.TrimSpace(line)
			}
		}
		if time.Now().After(deadline) {
			break
		}
		s.pause(t, 50*time.Millisecond)
	}
	t.Fatalf("secondarytest: %s logged no line with %q within %v\nlog:\n%s", s.kind, parts, timeout, s.logTail())
	return ""
}

// WaitRefused waits until the secondary logs that the primary refused a
// transfer of zone, and returns that line.
func (s *Secondary) WaitRefused(t testing.TB, timeout time.Duration, zone string) string {
	t.Helper()
	if s.kind == "powerdns" {
		return s.WaitLog(t, timeout, "'"+bare(fqdn(zone))+"'", "Query Refused")
	}
	return s.WaitLog(t, timeout, bare(fqdn(zone)), "REFUSED")
}

// pause sleeps, failing the test at once if the secondary has died.
func (s *Secondary) pause(t testing.TB, d time.Duration) {
	t.Helper()
	select {
	case <-s.done:
		t.Fatalf("secondarytest: %s exited: %v\nlog:\n%s", s.kind, s.err, s.logTail())
	case <-time.After(d):
	}
}

func containsAll(s string, parts []string) bool {
	for _, p := range parts {
		if !strings.Contains(s, p) {
			return false
		}
	}
	return true
}

// serialLess is a < b in RFC 1982 serial number arithmetic.
func serialLess(a, b uint32) bool { return a != b && int32(b-a) > 0 }

// RRsets returns the records of a section as sorted presentation lines
// with TTLs zeroed and names lower-cased, so that two servers' answers
// compare equal when they hold the same records in any order.
func RRsets(rrs []dns.RR) []string {
	out := make([]string, 0, len(rrs))
	for _, rr := range rrs {
		rr = dns.Copy(rr)
		rr.Header().Ttl = 0
		rr.Header().Name = strings.ToLower(rr.Header().Name)
		out = append(out, rr.String())
	}
	slices.Sort(out)
	return out
}
