package main

import (
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/miekg/dns"

	"github.com/cnsd/cnsd/store"
)

// holdingSecondary answers SOA queries for the zones in serials as a
// secondary that holds them from an earlier store does, and REFUSED for
// any other.
func holdingSecondary(t *testing.T, serials map[string]uint32) string {
	t.Helper()
	pc, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &dns.Server{PacketConn: pc, Handler: dns.HandlerFunc(func(w dns.ResponseWriter, r *dns.Msg) {
		m := new(dns.Msg).SetReply(r)
		q := r.Question[0]
		serial, ok := serials[strings.ToLower(q.Name)]
		switch {
		case !ok:
			m.Rcode = dns.RcodeRefused
		case q.Qtype == dns.TypeSOA:
			m.Authoritative = true
			m.Answer = []dns.RR{&dns.SOA{Hdr: dns.RR_Header{Name: q.Name, Rrtype: dns.TypeSOA, Class: dns.ClassINET, Ttl: 60},
				Ns: "ns1.example.test.", Mbox: "hostmaster.example.test.", Serial: serial}}
		}
		w.WriteMsg(m)
	})}
	go srv.ActivateAndServe()
	t.Cleanup(func() { srv.Shutdown() })
	return pc.LocalAddr().String()
}

// TestFreshStoreStartsAboveSecondaries: cnsd starting on an empty store
// (a move to a new store) asks its secondaries for the serials they hold
// and starts each zone above the highest, in RFC 1982 order, within one
// step: one ahead of the clock, one so far ahead that the clock's serial
// would look older to it. A secondary that does not answer is skipped
// with a log line naming it, and the start goes on.
func TestFreshStoreStartsAboveSecondaries(t *testing.T) {
	ts := uint32(store.TimeSerial(time.Now()))
	held := map[string]uint32{"a.example.test.": ts + 100000, "b.example.test.": ts + 1<<31 - 50}
	peer := holdingSecondary(t, held)
	behind := holdingSecondary(t, map[string]uint32{"a.example.test.": ts - 1000})
	silent, err := net.ListenPacket("udp", "127.0.0.1:0") // bound, never answers
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { silent.Close() })
	peers := fmt.Sprintf(`"peers": [%q, %q, %q]`, peer, behind, silent.LocalAddr().String())

	dir := t.TempDir()
	cfgPath := filepath.Join(dir, "cnsd.json")
	ports := freePorts(t, 2)
	zones := fmt.Sprintf(`"a.example.test": {"networks": ["*"], %s},
	  "b.example.test": {"networks": ["a1b2c3d4-0000-4000-8000-000000000001"], %s},
	  "c.example.test": {"networks": ["a1b2c3d4-0000-4000-8000-000000000002"], %s}`, peers, peers, peers)
	doc := fmt.Sprintf(daemonConfig, zones, filepath.Join(dir, "cnsd.db"), ports[0], ports[1])
	if err := os.WriteFile(cfgPath, []byte(doc), 0o644); err != nil {
		t.Fatal(err)
	}
	stderr := runDaemon(t, cfgPath)
	dnsAddr := fmt.Sprintf("127.0.0.1:%d", ports[0])
	serialOf := func(zone string) (uint32, bool) {
		r := ask(dnsAddr, zone, dns.TypeSOA)
		if r == nil || len(r.Answer) != 1 {
			return 0, false
		}
		return r.Answer[0].(*dns.SOA).Serial, true
	}
	for _, zone := range []string{"a.example.test.", "b.example.test.", "c.example.test."} {
		waitFor(t, "the SOA of "+zone, func() bool { _, ok := serialOf(zone); return ok })
	}
	for zone, x := range held {
		got, _ := serialOf(zone)
		if !store.Serial(x).Less(store.Serial(got)) || got-x > 10 {
			t.Errorf("%s served first at serial %d, want just above %d, the secondary's (RFC 1982)", zone, got, x)
		}
	}
	if got, _ := serialOf("c.example.test."); store.Serial(got).Less(store.Serial(ts)) {
		t.Errorf("c.example.test, which no secondary holds, at %d: below the clock's %d", got, ts)
	}
	for _, line := range []string{
		"secondary did not answer for its serial; starting without it",
		"peer=" + silent.LocalAddr().String(),
		fmt.Sprintf("a.example.test.=%d", held["a.example.test."]),
		fmt.Sprintf("b.example.test.=%d", held["b.example.test."]),
	} {
		if !strings.Contains(stderr.String(), line) {
			t.Errorf("the log lacks %q", line)
		}
	}
}
