package xfr

import (
	"fmt"
	"net"
	"net/netip"
	"sync"
	"testing"
	"time"

	"github.com/miekg/dns"
)

// consumer is a secondary that takes NOTIFY and refuses SOA queries for
// the zone, as Knot does for a catalog zone it interprets: after each
// NOTIFY it asks the primary for the SOA (its refresh), and transfers the
// zone when that serial is newer than its own and fetch is set.
type consumer struct {
	addr    netip.AddrPort
	primary string

	mu       sync.Mutex
	serial   uint32 // the serial it holds
	fetch    bool   // transfer a newer serial
	refuseNS bool   // refuse NOTIFY too: a secondary not configured for the zone
	notifies int
	polls    int // SOA queries refused
}

func startConsumer(t *testing.T) *consumer {
	t.Helper()
	pc, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	c := &consumer{addr: netip.MustParseAddrPort(pc.LocalAddr().String())}
	srv := &dns.Server{PacketConn: pc, Handler: c}
	go srv.ActivateAndServe()
	t.Cleanup(func() { srv.Shutdown() })
	return c
}

func (c *consumer) ServeDNS(w dns.ResponseWriter, r *dns.Msg) {
	m := new(dns.Msg)
	m.SetReply(r)
	c.mu.Lock()
	defer c.mu.Unlock()
	switch {
	case r.Opcode == dns.OpcodeNotify && c.refuseNS:
		m.Rcode = dns.RcodeNotAuth
	case r.Opcode == dns.OpcodeNotify:
		c.notifies++
		go c.refresh(r.Question[0].Name)
	default:
		c.polls++
		m.Rcode = dns.RcodeRefused
	}
	w.WriteMsg(m)
}

// refresh asks the primary for zone's SOA and transfers the zone when it
// is newer (the whole zone: what it holds does not matter here).
func (c *consumer) refresh(zone string) {
	q := new(dns.Msg)
	q.SetQuestion(zone, dns.TypeSOA)
	r, _, err := (&dns.Client{Timeout: time.Second}).Exchange(q, c.primary)
	if err != nil || len(r.Answer) != 1 {
		return
	}
	serial := r.Answer[0].(*dns.SOA).Serial
	c.mu.Lock()
	fetch := c.fetch && serial != c.serial
	c.mu.Unlock()
	if !fetch {
		return
	}
	m := new(dns.Msg)
	m.SetAxfr(zone)
	ch, err := (&dns.Transfer{}).In(m, c.primary)
	if err != nil {
		return
	}
	for env := range ch {
		if env.Error != nil {
			return
		}
	}
	c.mu.Lock()
	c.serial = serial
	c.mu.Unlock()
}

func (c *consumer) counts() (notifies, polls int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.notifies, c.polls
}

// TestUnpolledSecondary: a secondary that refuses SOA queries for a zone
// whose NOTIFY it takes is polled once, then confirmed by its transfers,
// or, when it is current already (cnsd restarted), by its refresh query
// with no transfer after it; it is not sent the NOTIFY again nor marked
// stale. One that refuses NOTIFY too is no secondary of the zone: it
// stays behind and goes stale.
func TestUnpolledSecondary(t *testing.T) {
	cases := []struct {
		name       string
		current    bool // holds the zone's serial from the start
		fetch      bool
		refuseNS   bool
		confirmed  bool
		commitNext bool
	}{
		{name: "transfers each serial", fetch: true, confirmed: true, commitNext: true},
		{name: "current already, refreshes only", current: true, confirmed: true},
		{name: "refuses NOTIFY too", refuseNS: true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			const zone = "example.test."
			c := startConsumer(t)
			src := testStore(t, map[string][]string{zone: {"a A 192.0.2.1"}})
			serial := uint32(src.Snapshot(zone).Serial())
			c.fetch, c.refuseNS = tc.fetch, tc.refuseNS
			if tc.current {
				c.serial = serial
			}
			opts := fastOptions
			opts.NotifyResend, opts.StaleAfter = 100*time.Millisecond, 2*time.Second
			// The primary's address is known once it listens; NOTIFY
			// waits for the worker's first round, after that.
			c.mu.Lock()
			addr, s := serve(t, parse(t, notifyConfig(t, c.addr.String(), "")+"}"), src, opts)
			c.primary = addr
			c.mu.Unlock()
			state := func() string { pz, _, _ := peerZoneOf(s, c.addr, zone); return fmt.Sprintf("%+v", pz) }
			if !tc.confirmed {
				eventually(t, "the secondary marked stale", func() bool {
					pz, _, _ := peerZoneOf(s, c.addr, zone)
					return pz.Stale && pz.Serial == 0
				}, state)
				return
			}
			confirmed := func(serial uint32) func() bool {
				return func() bool {
					pz, _, _ := peerZoneOf(s, c.addr, zone)
					return pz.Serial == serial && pz.Want == serial && pz.BehindSince.IsZero()
				}
			}
			eventually(t, "the serial confirmed", confirmed(serial), state)
			if tc.commitNext {
				serial = commitLines(t, src, zone, []string{"b A 192.0.2.2"})
				eventually(t, "the next serial confirmed", confirmed(serial), state)
			}
			notifies, polls := c.counts()
			time.Sleep(opts.StaleAfter + 500*time.Millisecond)
			pz, _, _ := peerZoneOf(s, c.addr, zone)
			if !confirmed(serial)() || pz.Stale {
				t.Fatalf("later: %+v, want serial %d confirmed", pz, serial)
			}
			if n, p := c.counts(); n != notifies || p != polls || p != 1 {
				t.Errorf("NOTIFYs %d then %d, SOA queries %d then %d: want no more of either, and one query in all",
					notifies, n, polls, p)
			}
		})
	}
}
