package secondarytest_test

import (
	"fmt"
	"net/netip"
	"testing"
	"time"

	"github.com/miekg/dns"

	"github.com/cnsd/cnsd/store"
	"github.com/cnsd/cnsd/xfr"
	"github.com/cnsd/cnsd/xfr/secondarytest"
)

// TestSecondariesShareAddress: BIND and Knot on 127.0.0.1, each on its
// own port and with its own zone, as the operator guide suggests for a
// test host. Their transfers come from the same address; each is
// credited only to the one carrying the zone, so neither is sent NOTIFY
// or polled for the other's zone, and after a run of commits each is
// confirmed current on its own zone only, none behind or stale.
func TestSecondariesShareAddress(t *testing.T) {
	const one, two, commits = "one.cnsd.test.", "two.cnsd.test.", 3
	st := openStore(t, store.Options{})
	records := func(i int) map[string][]store.Record {
		return map[string][]store.Record{
			one: {rec("a."+one, dns.TypeA, fmt.Sprintf("192.0.2.%d", i+1))},
			two: {rec("a."+two, dns.TypeA, fmt.Sprintf("198.51.100.%d", i+1))},
		}
	}
	serials := commit(t, st, records(0))
	c := listenCNSD(t)
	bind := secondarytest.StartBIND(t, secondarytest.Config{Primary: c.addr, Zones: []string{one}})
	knot := secondarytest.StartKnot(t, secondarytest.Config{Primary: c.addr, Zones: []string{two}})
	if bind.Addr().Addr() != knot.Addr().Addr() {
		t.Fatalf("BIND on %s and Knot on %s: not one address", bind.Addr(), knot.Addr())
	}
	cfg := parseConfig(t, `{"my_name": "ns1.cnsd.test", "hostmaster": "hostmaster@cnsd.test",
	  "forward_zones": {
	    "one.cnsd.test": {"networks": ["*"], "peers": [%q]},
	    "two.cnsd.test": {"networks": ["a1b2c3d4-0000-4000-8000-000000000001"], "peers": [%q]}}}`, peer(bind), peer(knot))
	// Stale soon: a secondary wrongly waited for on a zone it does not
	// carry shows it within the test.
	c.run(t, cfg, st, xfr.Options{StaleAfter: 2 * time.Second})
	for i := 1; i <= commits; i++ {
		bind.WaitSerial(t, one, serials[one], waitTimeout)
		knot.WaitSerial(t, two, serials[two], waitTimeout)
		serials = commit(t, st, records(i))
	}
	bind.WaitSerial(t, one, serials[one], waitTimeout)
	knot.WaitSerial(t, two, serials[two], waitTimeout)
	waitConfirmed(t, c, bind.Addr(), one, serials[one])
	waitConfirmed(t, c, knot.Addr(), two, serials[two])
	time.Sleep(3 * time.Second) // past StaleAfter

	want := map[netip.AddrPort]string{bind.Addr(): one, knot.Addr(): two}
	for _, p := range c.srv.Peers() {
		ap := netip.MustParseAddrPort(p.Addr)
		if len(p.Zones) != 1 || p.Zones[0].Zone != want[ap] {
			t.Errorf("%s (%s): zones %+v, want only %s", p.Addr, p.Version, p.Zones, want[ap])
			continue
		}
		if z := p.Zones[0]; z.Serial != serials[z.Zone] || z.Want != serials[z.Zone] || z.Stale || !z.BehindSince.IsZero() {
			t.Errorf("%s on %s: %+v, want current at %d", p.Addr, z.Zone, z, serials[z.Zone])
		}
	}
	if got := len(c.srv.Peers()); got != 2 {
		t.Errorf("%d secondaries known, want 2: %+v", got, c.srv.Peers())
	}
}
