package secondarytest

import (
	"errors"
	"net"
	"net/netip"
	"strings"
	"testing"
	"time"

	"github.com/miekg/dns"
)

// TestReadyOnlyAsItself: another DNS server answering on a secondary's
// port is not taken for the secondary, which (having failed to bind the
// port) exits; waitReady reports the exit. Answering any query was once
// enough, and the test would then have run against the wrong server.
func TestReadyOnlyAsItself(t *testing.T) {
	pc, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	other := &dns.Server{PacketConn: pc, Handler: dns.HandlerFunc(func(w dns.ResponseWriter, r *dns.Msg) {
		m := new(dns.Msg)
		m.SetReply(r)
		if q := r.Question[0]; q.Qclass == dns.ClassCHAOS && q.Qtype == dns.TypeTXT {
			m.Answer = append(m.Answer, &dns.TXT{Hdr: dns.RR_Header{Name: q.Name, Rrtype: dns.TypeTXT, Class: dns.ClassCHAOS}, Txt: []string{"another server"}})
		}
		_ = w.WriteMsg(m)
	})}
	go func() { _ = other.ActivateAndServe() }()
	defer other.Shutdown()

	s := &Secondary{kind: "knot", dir: t.TempDir(), addr: netip.MustParseAddrPort(pc.LocalAddr().String()), done: make(chan struct{})}
	s.err = errors.New("exit status 1")
	time.AfterFunc(500*time.Millisecond, func() { close(s.done) })
	err = s.waitReady()
	if err == nil || !strings.Contains(err.Error(), "exited") {
		t.Fatalf("waitReady with another server on the port = %v, want the secondary's exit", err)
	}
	if id, err := serverID(s.addr.String(), time.Second); err != nil || id != "another server" {
		t.Fatalf("serverID = %q, %v; the other server was not asked", id, err)
	}
}
