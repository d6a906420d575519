package secondarytest_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/miekg/dns"

	"github.com/cnsd/cnsd/schema"
	"github.com/cnsd/cnsd/store"
	"github.com/cnsd/cnsd/xfr"
	"github.com/cnsd/cnsd/xfr/secondarytest"
)

// TestCatalogNewReverseZone: a secondary configured with only the
// catalog zone serves the forward zone it lists and a reverse zone that
// appears later, once the catalog maintainer has listed it.
func TestCatalogNewReverseZone(t *testing.T) {
	const (
		catalog = "catalog.cnsd.invalid."
		fwd     = "fwd.cnsd.test."
		rev     = "2.0.192.in-addr.arpa."
	)
	for _, sec := range secondaries {
		t.Run(sec.name, func(t *testing.T) {
			if sec.name == "nsd" {
				t.Skip("NSD 4.6, Debian 12's, does not consume catalog zones (NSD 4.9 does)")
			}
			st, zones, c, s := catalogFollower(t, sec, xfr.Options{})

			s.WaitAnswer(t, "h5."+fwd, "A", waitTimeout, hasAnswer)
			zones[rev] = []store.Record{rec("5."+rev, dns.TypePTR, "h5."+fwd)}
			commit(t, st, zones)
			s.WaitAnswer(t, "5."+rev, "PTR", waitTimeout, hasAnswer)
			sameAnswers(t, c, s, []string{"5." + rev, "6." + rev}, "PTR")
			sameAnswers(t, c, s, []string{"h5." + fwd}, "A")
		})
	}
}

// catalogFollower serves fwd.cnsd.test (h5 A 192.0.2.5, in the returned
// zones) and its catalog, with the catalog maintainer running, to a
// secondary of kind sec that follows the catalog and is every zone's peer.
func catalogFollower(t *testing.T, sec secondaryKind, opts xfr.Options) (*store.Store, map[string][]store.Record, *cnsd, *secondarytest.Secondary) {
	t.Helper()
	st := openStore(t, store.Options{})
	zones := map[string][]store.Record{"fwd.cnsd.test.": {rec("h5.fwd.cnsd.test.", dns.TypeA, "192.0.2.5")}}
	commit(t, st, zones)
	c := listenCNSD(t)
	s := sec.start(t, secondarytest.Config{Primary: c.addr, Catalog: "catalog.cnsd.invalid."})
	cfg := parseConfig(t, `{"my_name": "ns1.cnsd.test", "hostmaster": "hostmaster@cnsd.test",
		"forward_zones": {"fwd.cnsd.test": {"networks": ["*"], "peers": [%[1]q]}},
		"reverse_zones": {"peers": [%[1]q]},
		"catalog_zone": {"peers": [%[1]q]}}`, peer(s))
	c.run(t, cfg, st, opts)
	runCatalog(t, cfg, st)
	return st, zones, c, s
}

func hasAnswer(r *dns.Msg) bool { return r.Rcode == dns.RcodeSuccess && len(r.Answer) > 0 }

// runCatalog runs the catalog maintainer over st until the test ends.
func runCatalog(t *testing.T, cfg *schema.Config, st *store.Store) {
	t.Helper()
	cat := xfr.NewCatalog(cfg, st, nil)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- cat.Run(ctx) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil && !errors.Is(err, context.Canceled) {
			t.Errorf("catalog: %v", err)
		}
	})
}

// TestCatalogConsumerConfirmed: a secondary that consumes the catalog is
// confirmed on the catalog zone as on its members, and no NOTIFY is sent
// to it again once it has transferred the serial. Knot does not serve a
// catalog zone it interprets (it answers an SOA query for it REFUSED):
// its transfers alone tell that it follows, and must not leave it
// reported behind, then stale, while cnsd keeps sending the NOTIFY.
func TestCatalogConsumerConfirmed(t *testing.T) {
	const (
		catalog = "catalog.cnsd.invalid."
		fwd     = "fwd.cnsd.test."
		rev     = "2.0.192.in-addr.arpa."
	)
	const staleAfter = 3 * time.Second
	for _, sec := range secondaries {
		t.Run(sec.name, func(t *testing.T) {
			if sec.name == "nsd" {
				t.Skip("NSD 4.6, Debian 12's, does not consume catalog zones (NSD 4.9 does)")
			}
			st, zones, c, s := catalogFollower(t, sec, xfr.Options{NotifyResend: 200 * time.Millisecond, StaleAfter: staleAfter})
			s.WaitAnswer(t, "h5."+fwd, "A", waitTimeout, hasAnswer)
			// A new member: the catalog's serial moves on.
			zones[rev] = []store.Record{rec("5."+rev, dns.TypePTR, "h5."+fwd)}
			commit(t, st, zones)
			s.WaitAnswer(t, "5."+rev, "PTR", waitTimeout, hasAnswer)

			current := func() (map[string]xfr.PeerZone, bool) {
				got := peerZones(c.srv, peer(s))
				for _, z := range []string{catalog, fwd, rev} {
					pz, ok := got[z]
					if !ok || pz.Want == 0 || pz.Serial != pz.Want || !pz.BehindSince.IsZero() || pz.Stale {
						return got, false
					}
				}
				return got, true
			}
			deadline := time.Now().Add(waitTimeout)
			got, ok := current()
			for ; !ok && time.Now().Before(deadline); got, ok = current() {
				time.Sleep(50 * time.Millisecond)
			}
			if !ok {
				t.Fatalf("%s: peer zones %+v, want the catalog and both members confirmed at their serials", sec.name, got)
			}
			// Longer than a secondary may stay behind: it stays current,
			// and is sent no NOTIFY meanwhile.
			time.Sleep(staleAfter + time.Second)
			later, ok := current()
			if !ok {
				t.Fatalf("%s: %v later, peer zones %+v, want every zone still confirmed", sec.name, staleAfter+time.Second, later)
			}
			for z, pz := range later {
				if pz.NotifySent != got[z].NotifySent {
					t.Errorf("%s %s: %d NOTIFYs sent, %d before: sent again to a secondary that serves the serial",
						sec.name, z, pz.NotifySent, got[z].NotifySent)
				}
			}
		})
	}
}

// peerZones is what srv knows of each zone on the secondary at addr.
func peerZones(srv *xfr.Server, addr string) map[string]xfr.PeerZone {
	out := map[string]xfr.PeerZone{}
	for _, p := range srv.Peers() {
		if p.Addr == addr {
			for _, z := range p.Zones {
				out[z.Zone] = z
			}
		}
	}
	return out
}
