package secondarytest_test

import (
	"net/netip"
	"testing"
	"time"

	"github.com/cnsd/cnsd/store"
	"github.com/cnsd/cnsd/xfr"
	"github.com/cnsd/cnsd/xfr/secondarytest"
)

// TestFollowOverIPv6: with cnsd and every secondary on ::1 (the peer
// given as "[::1]:port"), NOTIFY, the SOA query that follows, IXFR and
// cnsd's SOA polling all go over IPv6: each secondary follows a run of
// commits by IXFR, and cnsd sees it confirm the last serial.
func TestFollowOverIPv6(t *testing.T) {
	const commits = 5
	for _, sec := range secondaries {
		t.Run(sec.name, func(t *testing.T) {
			t.Parallel()
			const zone = "v6.cnsd.test."
			st := openStore(t, store.Options{})
			m := newZoneModel(zone, 6, 50)
			serials := []uint32{commit(t, st, m.records())[zone]}
			c := listenCNSDOn(t, netip.IPv6Loopback())
			s := sec.start(t, secondarytest.Config{Primary: c.addr, Zones: []string{zone}, Listen: netip.IPv6Loopback()})
			if !s.Addr().Addr().Is6() {
				t.Fatalf("%s listens on %s, not on ::1", sec.name, s.Addr())
			}
			cfg := parseConfig(t, `{"my_name": "ns1.cnsd.test", "hostmaster": "hostmaster@cnsd.test",
				"forward_zones": {"v6.cnsd.test": {"networks": ["*"], "peers": [%q]}}}`, peer(s))
			c.run(t, cfg, st, xfr.Options{})
			s.WaitSerial(t, zone, serials[0], waitTimeout)
			for range commits {
				touched := m.mutate()
				serial := commit(t, st, m.records())[zone]
				serials = append(serials, serial)
				s.WaitSerial(t, zone, serial, waitTimeout)
				sameAnswers(t, c, s, m.sample(touched), "A", "AAAA", "TXT")
			}
			transfersAre(t, c, s, s.Transfers(zone), zone, "AXFR", serials)
			last := serials[len(serials)-1]
			waitConfirmed(t, c, s.Addr(), zone, last)
		})
	}
}

// waitConfirmed waits until cnsd's SOA polling has seen the secondary at
// addr serve zone at serial.
func waitConfirmed(t *testing.T, c *cnsd, addr netip.AddrPort, zone string, serial uint32) {
	t.Helper()
	deadline := time.Now().Add(waitTimeout)
	for time.Now().Before(deadline) {
		for _, p := range c.srv.Peers() {
			for _, z := range p.Zones {
				if p.Addr == addr.String() && z.Zone == zone && z.Serial == serial {
					return
				}
			}
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatalf("cnsd did not see %s confirm %s at serial %d: %+v", addr, zone, serial, c.srv.Peers())
}
