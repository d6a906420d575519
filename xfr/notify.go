package xfr

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"strings"
	"time"

	"github.com/miekg/dns"
)

// work brings one secondary up to date on one zone: NOTIFY with the
// latest serial (a burst of commits costs one NOTIFY), then SOA polls
// until it serves that serial or has been behind for StaleAfter, with
// the NOTIFY sent again after NotifyResend, 2×NotifyResend, … while it
// stays behind. It ends when nothing is due; want starts it again.
func (t *tracker) work(ctx context.Context, addr netip.AddrPort, zone string) {
	for ctx.Err() == nil {
		t.mu.Lock()
		pz := t.zoneLocked(addr, zone)
		if pz == nil || pz.stale || !pz.due() {
			if pz != nil {
				pz.running = false
			}
			t.mu.Unlock()
			return
		}
		serial, notify := pz.want, pz.notified != pz.want
		now := t.s.opts.Clock()
		switch {
		case notify:
			pz.resendAfter = t.s.opts.NotifyResend
		case pz.reached() || pz.lastNotify.IsZero():
		case now.Sub(pz.lastNotify) >= pz.resendAfter:
			// Answered but not acted on: the secondary is still behind.
			notify = true
			pz.resendAfter = min(2*pz.resendAfter, 64*t.s.opts.NotifyResend)
		}
		t.mu.Unlock()
		if notify {
			err := t.notify(ctx, addr, zone, serial)
			t.mu.Lock()
			pz.notified, pz.lastNotify = serial, t.s.opts.Clock()
			pz.accepted = err == nil
			if err != nil {
				pz.notifyFailed++
			}
			re := notifyRcodeError{}
			refused := errors.As(err, &re)
			if !refused {
				pz.refusedSince = time.Time{}
			} else if pz.refusedSince.IsZero() {
				pz.refusedSince = pz.lastNotify
			}
			refusedFor := pz.lastNotify.Sub(pz.refusedSince)
			t.mu.Unlock()
			switch {
			case err == nil || ctx.Err() != nil:
			case refused && refusedFor < refusedQuietly:
				// A zone that just joined the catalog is refused until the
				// secondary has read the catalog again and loaded it,
				// which it then does unasked: expected for a while. The
				// NOTIFY goes again after NotifyResend while it lacks
				// the serial.
				t.s.log.Debug("NOTIFY refused; sending it again if the secondary does not load the zone",
					"zone", zone, "peer", addr.String(), "serial", serial, "err", err)
			default:
				// A secondary that refuses a zone refuses every serial:
				// one line a minute per secondary, zone and outcome.
				outcome := "no answer"
				if refused {
					outcome = dns.RcodeToString[re.rcode]
				}
				t.s.warnClient("NOTIFY|"+addr.String()+"|"+zone+"|"+outcome, "NOTIFY failed",
					"zone", zone, "peer", addr.String(), "serial", serial, "err", err)
			}
		}
		select {
		case <-ctx.Done():
		case <-pz.wake:
			continue // a newer serial: NOTIFY it now, poll after
		case <-time.After(t.s.opts.PollInterval):
			t.poll(ctx, addr, zone)
		}
	}
	t.mu.Lock()
	if pz := t.zoneLocked(addr, zone); pz != nil {
		pz.running = false
	}
	t.mu.Unlock()
}

// zoneLocked returns the state of zone on the secondary at addr; nil
// when ForgetPeer dropped it.
func (t *tracker) zoneLocked(addr netip.AddrPort, zone string) *peerZone {
	if p := t.peers[addr]; p != nil {
		return p.zones[zone]
	}
	return nil
}

// notify sends NOTIFY for zone at serial to addr, retrying with doubling
// back-off until it is answered.
func (t *tracker) notify(ctx context.Context, addr netip.AddrPort, zone string, serial uint32) error {
	st := t.s.settings()
	z, ok := st.zone(t.s.src, zone)
	if !ok {
		return fmt.Errorf("zone %s is no longer served", zone)
	}
	m := new(dns.Msg)
	m.SetNotify(zone)
	m.Answer = []dns.RR{st.soa(z, serial)}
	c := t.client(addr)
	keyName, alg, signed := st.tsigFor(z)
	backoff := t.s.opts.NotifyBackoff
	var err error
	for attempt := 0; attempt <= t.s.opts.NotifyRetries; attempt++ {
		if attempt > 0 && !sleep(ctx, backoff) {
			return ctx.Err()
		}
		if attempt > 0 {
			backoff *= 2
		}
		if signed {
			m.SetTsig(keyName, alg, 300, time.Now().Unix())
		}
		t.mu.Lock()
		if pz := t.zoneLocked(addr, zone); pz != nil {
			pz.notifySent++
		}
		t.mu.Unlock()
		var r *dns.Msg
		if r, _, err = c.ExchangeContext(ctx, m, addr.String()); err == nil {
			if r.Rcode != dns.RcodeSuccess {
				return notifyRcodeError{r.Rcode}
			}
			return nil
		}
	}
	return err
}

// refusedQuietly is how long a secondary may answer a zone's NOTIFYs with
// an error rcode, from the first after one it took (or the zone's first),
// before that is a warning: long enough for a secondary to read a catalog
// zone that just gained the zone and to load it.
const refusedQuietly = 30 * time.Second

// notifyRcodeError is a NOTIFY the secondary answered with an error.
type notifyRcodeError struct{ rcode int }

func (e notifyRcodeError) Error() string { return "answered " + dns.RcodeToString[e.rcode] }

// client is how NOTIFY and SOA polls reach the secondary at addr: over
// UDP, from the address cnsd serves on where that says which one (see
// source).
func (t *tracker) client(addr netip.AddrPort) *dns.Client {
	c := &dns.Client{Net: "udp", Timeout: t.s.opts.NotifyTimeout, TsigProvider: tsigProvider{t.s}}
	if src, ok := t.source(addr.Addr()); ok {
		c.Dialer = &net.Dialer{Timeout: t.s.opts.NotifyTimeout, LocalAddr: net.UDPAddrFromAddrPort(netip.AddrPortFrom(src, 0))}
	}
	return c
}

// source is the address a NOTIFY to target goes out from: the address
// cnsd serves on in target's family, so that a secondary that takes
// NOTIFY only from its primary's address (as BIND, Knot, NSD and
// PowerDNS do) recognises it, also when the host has several. The
// kernel chooses when cnsd serves on the family's wildcard, or only on
// loopback addresses for a target elsewhere (or the reverse).
func (t *tracker) source(target netip.Addr) (netip.Addr, bool) {
	target = target.Unmap()
	for _, a := range t.serving {
		if a.Is4() == target.Is4() && a.IsUnspecified() {
			return netip.Addr{}, false
		}
	}
	for _, a := range t.serving {
		if a.Is4() == target.Is4() && a.IsLoopback() == target.IsLoopback() {
			return a, true
		}
	}
	return netip.Addr{}, false
}

// poll asks the secondary for the zone's SOA and records the serial it
// serves; a secondary behind for longer than StaleAfter is marked stale
// and no longer waited for. One that answers with an error rcode after
// transferring the zone or taking its NOTIFY is confirmed otherwise
// (unpolled.go).
func (t *tracker) poll(ctx context.Context, addr netip.AddrPort, zone string) {
	t.mu.Lock()
	pz := t.zoneLocked(addr, zone)
	unpolled := pz != nil && pz.unpolled
	t.mu.Unlock()
	var serial uint32
	err := errUnpolled
	if !unpolled {
		serial, err = t.querySOA(ctx, addr, zone)
	}
	now := t.s.opts.Clock()
	t.mu.Lock()
	p, pz := t.peers[addr], t.zoneLocked(addr, zone)
	if pz == nil { // forgotten meanwhile
		t.mu.Unlock()
		return
	}
	switch re := (soaRcodeError{}); {
	case err == nil:
		pz.confirm(serial, now)
		t.observeLocked(addr, zone, pz, serial)
	case errors.As(err, &re):
		t.refusedLocked(addr, zone, pz, re.rcode, now)
	case pz.unpolled:
		pz.confirmRefresh(now)
	}
	if !pz.reached() && now.Sub(pz.wantSince) > t.s.opts.StaleAfter && !pz.stale {
		pz.stale = true
		if !pz.learnt { // nobody promised a learnt one would keep up
			t.s.log.Warn("secondary marked stale", "zone", zone, "peer", addr.String(),
				"confirmed", pz.confirmed, "serial", pz.want, "behind_since", pz.wantSince)
		}
	}
	askVersion := err == nil && !p.asked
	p.asked = p.asked || askVersion
	t.mu.Unlock()
	if askVersion {
		v := t.queryVersion(ctx, addr)
		t.mu.Lock()
		p.version = v
		t.mu.Unlock()
	}
}

// querySOA returns the serial the secondary at addr serves for zone; an
// answer without it is a soaRcodeError.
func (t *tracker) querySOA(ctx context.Context, addr netip.AddrPort, zone string) (uint32, error) {
	m := new(dns.Msg)
	m.SetQuestion(zone, dns.TypeSOA)
	m.RecursionDesired = false
	r, _, err := t.client(addr).ExchangeContext(ctx, m, addr.String())
	if err != nil {
		return 0, err
	}
	for _, rr := range r.Answer {
		if soa, ok := rr.(*dns.SOA); ok && strings.EqualFold(soa.Hdr.Name, zone) {
			return soa.Serial, nil
		}
	}
	return 0, soaRcodeError{r.Rcode}
}

// soaRcodeError is an SOA query answered without the zone's SOA.
type soaRcodeError struct{ rcode int }

func (e soaRcodeError) Error() string { return "no SOA in the answer: " + dns.RcodeToString[e.rcode] }

// queryVersion asks version.bind CH TXT, which BIND, Knot and most others
// answer with their software and version; "" when it does not.
func (t *tracker) queryVersion(ctx context.Context, addr netip.AddrPort) string {
	m := new(dns.Msg)
	m.SetQuestion("version.bind.", dns.TypeTXT)
	m.Question[0].Qclass = dns.ClassCHAOS
	r, _, err := t.client(addr).ExchangeContext(ctx, m, addr.String())
	if err != nil {
		return ""
	}
	for _, rr := range r.Answer {
		if txt, ok := rr.(*dns.TXT); ok {
			return strings.Join(txt.Txt, "")
		}
	}
	return ""
}

// sleep waits d or until ctx ends, reporting whether the full wait
// happened.
func sleep(ctx context.Context, d time.Duration) bool {
	tm := time.NewTimer(d)
	defer tm.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-tm.C:
		return true
	}
}
