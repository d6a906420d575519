package secondarytest_test

import (
	"net"
	"net/netip"
	"testing"
	"time"

	"github.com/cnsd/cnsd/store"
	"github.com/cnsd/cnsd/xfr"
	"github.com/cnsd/cnsd/xfr/secondarytest"
)

// TestFollowOnOtherAddresses: NOTIFY, the SOA query that follows, IXFR
// and cnsd's SOA polling work whatever loopback address cnsd and the
// secondaries listen on — each secondary follows a run of commits by
// NOTIFY and IXFR, and cnsd sees it confirm the last serial:
//
//   - both on ::1, the peer given as "[::1]:port";
//   - cnsd on 127.0.0.3, the secondary on 127.0.0.1, which takes NOTIFY
//     only from its primary's address: the kernel would send from
//     127.0.0.1, so cnsd must send from the address it serves on.
func TestFollowOnOtherAddresses(t *testing.T) {
	const commits = 5
	places := []struct {
		name              string
		primary, listener netip.Addr
	}{
		{"ipv6", netip.IPv6Loopback(), netip.IPv6Loopback()},
		{"primary on 127.0.0.3", netip.MustParseAddr("127.0.0.3"), netip.MustParseAddr("127.0.0.1")},
	}
	for _, place := range places {
		t.Run(place.name, func(t *testing.T) {
			t.Parallel()
			if err := canListen(place.primary, place.listener); err != nil {
				t.Skipf("this machine cannot listen there: %v", err)
			}
			for _, sec := range secondaries {
				t.Run(sec.name, func(t *testing.T) {
					t.Parallel()
					const zone = "other.cnsd.test."
					st := openStore(t, store.Options{})
					m := newZoneModel(zone, 6, 50)
					serials := []uint32{commit(t, st, m.records())[zone]}
					c := listenCNSDOn(t, place.primary)
					s := sec.start(t, secondarytest.Config{Primary: c.addr, Zones: []string{zone}, Listen: place.listener})
					if s.Addr().Addr() != place.listener {
						t.Fatalf("%s listens on %s, not on %s", sec.name, s.Addr(), place.listener)
					}
					cfg := parseConfig(t, `{"my_name": "ns1.cnsd.test", "hostmaster": "hostmaster@cnsd.test",
				"forward_zones": {"other.cnsd.test": {"networks": ["*"], "peers": [%q]}}}`, peer(s))
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
					waitConfirmed(t, c, s.Addr(), zone, serials[len(serials)-1])
				})
			}
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

// canListen reports why a UDP socket cannot be bound on one of addrs (::1
// with IPv6 off, 127.0.0.3 where only 127.0.0.1 is configured).
func canListen(addrs ...netip.Addr) error {
	for _, a := range addrs {
		pc, err := net.ListenPacket("udp", netip.AddrPortFrom(a, 0).String())
		if err != nil {
			return err
		}
		pc.Close()
	}
	return nil
}
