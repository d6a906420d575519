package xfr

import (
	"fmt"
	"net/netip"
	"sync"
	"testing"
	"time"
)

// TestSecondariesShareAddress: BIND and Knot on one test host, one
// address and two ports, each carrying its own zones (the operator
// guide's test setup). A transfer comes from an ephemeral port, so the
// address alone says who made it: it is credited only to the secondaries
// at the address that carry the zone. The other is sent no NOTIFY and no
// SOA poll for it, and never shows behind or stale for a zone it does
// not carry. Where both carry a zone, a transfer from the address
// credits neither: each is confirmed by its own SOA answers.
func TestSecondariesShareAddress(t *testing.T) {
	bind, knot := startFake(t, nil), startFake(t, nil)
	bind.mu.Lock()
	bind.zones = map[string]bool{"example.test.": true, "shared.test.": true}
	bind.mu.Unlock()
	knot.mu.Lock()
	knot.zones = map[string]bool{"other.test.": true, "shared.test.": true}
	knot.pinned = map[string]uint32{"shared.test.": 1} // it does not follow the shared zone
	knot.mu.Unlock()
	src := testStore(t, map[string][]string{
		"example.test.": {"a A 192.0.2.1"}, "other.test.": {"a A 192.0.2.2"}, "shared.test.": {"a A 192.0.2.3"}})
	var mu sync.Mutex
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	opts := fastOptions
	opts.StaleAfter = time.Hour
	opts.Clock = func() time.Time { mu.Lock(); defer mu.Unlock(); return now }
	cfg := fmt.Sprintf(`{"my_name": "ns.example.test", "hostmaster": "hostmaster@example.test",
	  "forward_zones": {
	    "example.test": {"networks": ["*"], "peers": [%[1]q]},
	    "other.test": {"networks": ["a1b2c3d4-0000-4000-8000-000000000001"], "peers": [%[2]q]},
	    "shared.test": {"networks": ["a1b2c3d4-0000-4000-8000-000000000002"], "peers": [%[1]q, %[2]q]}}%[3]s}`,
		bind.addr.String(), knot.addr.String(), loopbackTransfers)
	addr, s := serve(t, parse(t, cfg), src, opts)
	serial := func(zone string) uint32 { return uint32(src.Snapshot(zone).Serial()) }
	loopback := netip.MustParseAddr("127.0.0.1")
	for _, zone := range []string{"example.test.", "other.test.", "shared.test."} {
		// A transfer from the shared address, as either would make it.
		if _, rcode, _ := transfer(t, addr, zone, false, 0, nil); rcode != 0 {
			t.Fatalf("AXFR %s: rcode %d", zone, rcode)
		}
		s.peers.holds(loopback, zone, serial(zone)) // and an IXFR request saying it holds the serial
	}
	eventually(t, "each secondary confirmed by its own polls", func() bool {
		b, _, _ := peerZoneOf(s, bind.addr, "example.test.")
		k, _, _ := peerZoneOf(s, knot.addr, "other.test.")
		// The shared zone credits neither: bind is current there only
		// once its own SOA answer has been read.
		bs, _, _ := peerZoneOf(s, bind.addr, "shared.test.")
		return b.Serial == serial("example.test.") && k.Serial == serial("other.test.") &&
			bs.Serial == serial("shared.test.")
	})
	mu.Lock()
	now = now.Add(2 * time.Hour)
	mu.Unlock()
	eventually(t, "knot stale on the shared zone, which it does not follow", func() bool {
		k, _, _ := peerZoneOf(s, knot.addr, "shared.test.")
		return k.Stale
	})

	want := map[netip.AddrPort]map[string]string{
		bind.addr: {"example.test.": "current, credited", "shared.test.": "current"},
		knot.addr: {"other.test.": "current, credited", "shared.test.": "stale"},
	}
	for _, p := range s.Peers() {
		ap := netip.MustParseAddrPort(p.Addr)
		if want[ap] == nil {
			t.Errorf("unexpected secondary %s: %+v", p.Addr, p.Zones)
			continue
		}
		got := map[string]string{}
		for _, z := range p.Zones {
			state := "current"
			if z.Serial != z.Want {
				state = "behind"
			}
			if z.Stale {
				state = "stale"
			}
			if z.AXFR+z.IXFR > 0 {
				state += ", credited"
			}
			got[z.Zone] = state
		}
		if fmt.Sprint(got) != fmt.Sprint(want[ap]) {
			t.Errorf("%s: zones %v, want %v", p.Addr, got, want[ap])
		}
	}
	for name, f := range map[string]*fakeSecondary{"bind": bind, "knot": knot} {
		f.mu.Lock()
		strays, polls := f.strays, f.polls
		f.mu.Unlock()
		if len(strays) > 0 {
			t.Errorf("%s was asked about zones it does not carry: %v", name, strays)
		}
		if polls == 0 {
			t.Errorf("%s was never polled", name)
		}
	}
}
