package xfr

import (
	"context"
	"errors"
	"net/netip"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/miekg/dns"

	"github.com/cnsd/cnsd/schema"
	"github.com/cnsd/cnsd/store"
)

// PeerSerials asks the configured secondaries of every zone the
// configuration names — the forward zones and the catalog zone — for the
// serial they serve, within timeout, and returns per zone the latest one
// answered (RFC 1982 order). A new store starts its zones above them
// (store.Store.SeedFloors), so that secondaries that hold the zones from
// an earlier store take cnsd's from its first commit. A secondary that
// does not answer in time is skipped with a log line naming it; one that
// does not carry the zone (no SOA in its answer) is skipped. Reverse
// zones are not asked for: their names come with the VMs; a secondary
// ahead on one is found by the SOA polls and the serial raised past it.
func (s *Server) PeerSerials(ctx context.Context, timeout time.Duration) map[string]store.Serial {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	st := s.settings()
	zones := map[string]schema.ZoneAccess{}
	for name, zc := range st.forward {
		zones[name] = zc.access
	}
	if st.catalog != nil {
		zones[st.catalog.name] = st.catalog.access
	}
	addrs := s.peerEndpoints(ctx, zones)
	var (
		mu    sync.Mutex
		found = map[string]store.Serial{}
		wg    sync.WaitGroup
	)
	for zone, targets := range addrs {
		for _, addr := range targets {
			wg.Add(1)
			go func() {
				defer wg.Done()
				serial, err := s.peerSerial(ctx, addr, zone)
				switch re := (soaRcodeError{}); {
				case errors.As(err, &re):
					s.log.Info("secondary does not serve the zone yet", "zone", zone, "peer", addr.String(), "err", err)
					return
				case err != nil:
					s.log.Warn("secondary did not answer for its serial; starting without it", "zone", zone,
						"peer", addr.String(), "timeout", timeout, "err", err)
					return
				}
				s.log.Info("secondary serves the zone", "zone", zone, "peer", addr.String(), "serial", serial)
				mu.Lock()
				defer mu.Unlock()
				if cur, ok := found[zone]; !ok || cur.Less(store.Serial(serial)) {
					found[zone] = store.Serial(serial)
				}
			}()
		}
	}
	wg.Wait()
	return found
}

// peerEndpoints resolves the secondaries of each zone in zones to the
// addresses and ports they listen on. A host name that does not resolve
// is logged and skipped.
func (s *Server) peerEndpoints(ctx context.Context, zones map[string]schema.ZoneAccess) map[string][]netip.AddrPort {
	resolved := map[string][]netip.Addr{}
	out := map[string][]netip.AddrPort{}
	for zone, access := range zones {
		for _, p := range access.Peers {
			host, port, err := schema.SplitPeer(p)
			if err != nil {
				continue
			}
			if a, err := netip.ParseAddr(host); err == nil {
				out[zone] = append(out[zone], netip.AddrPortFrom(a.Unmap(), port))
				continue
			}
			host = strings.ToLower(host)
			addrs, ok := resolved[host]
			if !ok {
				addrs, err = s.opts.Resolver.LookupNetIP(ctx, "ip", host)
				if err != nil {
					s.log.Warn("cannot resolve a secondary to ask for its serial", "peer", host, "err", err)
				}
				resolved[host] = addrs
			}
			for _, a := range addrs {
				out[zone] = append(out[zone], netip.AddrPortFrom(a.Unmap(), port))
			}
		}
		slices.SortFunc(out[zone], netip.AddrPort.Compare)
		out[zone] = slices.Compact(out[zone])
	}
	return out
}

// peerSerialAttempt bounds one SOA query of PeerSerials: a lost answer
// is asked again within the timeout.
const peerSerialAttempt = 500 * time.Millisecond

// peerSerial asks the secondary at addr for the serial of zone: an SOA
// query over UDP, retried until ctx ends when unanswered.
func (s *Server) peerSerial(ctx context.Context, addr netip.AddrPort, zone string) (uint32, error) {
	m := new(dns.Msg)
	m.SetQuestion(zone, dns.TypeSOA)
	m.RecursionDesired = false
	c := &dns.Client{Net: "udp", Timeout: min(s.opts.NotifyTimeout, peerSerialAttempt)}
	for {
		r, _, err := c.ExchangeContext(ctx, m, addr.String())
		if err == nil {
			for _, rr := range r.Answer {
				if soa, ok := rr.(*dns.SOA); ok && strings.EqualFold(soa.Hdr.Name, zone) {
					return soa.Serial, nil
				}
			}
			return 0, soaRcodeError{r.Rcode}
		}
		if ctx.Err() != nil {
			return 0, err
		}
		if !sleep(ctx, 100*time.Millisecond) {
			return 0, err
		}
	}
}
