package conformance

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/miekg/dns"

	"github.com/cnsd/cnsd/store"
)

// transfer runs an AXFR (serial 0) or an IXFR from serial of zone at addr
// and returns every record received, in order.
func transfer(addr, zone string, ixfrFrom uint32) ([]dns.RR, error) {
	m := new(dns.Msg)
	if ixfrFrom == 0 {
		m.SetAxfr(zone)
	} else {
		m.SetIxfr(zone, ixfrFrom, "ns1.example.test.", "hostmaster.example.test.")
	}
	ch, err := (&dns.Transfer{DialTimeout: 5 * time.Second, ReadTimeout: 10 * time.Second}).In(m, addr)
	if err != nil {
		return nil, err
	}
	var out []dns.RR
	for env := range ch {
		if env.Error != nil {
			return nil, env.Error
		}
		out = append(out, env.RR...)
	}
	return out, nil
}

// zoneSet is a zone's records as a set of lower-case presentation lines.
type zoneSet map[string]bool

func setOf(rrs []dns.RR) zoneSet {
	s := zoneSet{}
	for _, rr := range rrs {
		s[strings.ToLower(strings.ReplaceAll(rr.String(), "\t", " "))] = true
	}
	return s
}

// diff lists the records only in a (-) and only in b (+).
func (a zoneSet) diff(b zoneSet) string {
	var out []string
	for _, k := range slices.Sorted(maps.Keys(a)) {
		if !b[k] {
			out = append(out, "- "+k)
		}
	}
	for _, k := range slices.Sorted(maps.Keys(b)) {
		if !a[k] {
			out = append(out, "+ "+k)
		}
	}
	return strings.Join(out, "\n")
}

// axfr transfers zone from addr and checks the AXFR's shape: SOA first
// and last (RFC 5936 §2.2), no other SOA.
func axfr(t *testing.T, server, addr, zone string) zoneSet {
	t.Helper()
	rrs, err := transfer(addr, zone, 0)
	if err != nil {
		t.Fatalf("AXFR %s from %s: %v", zone, server, err)
	}
	soas := 0
	for _, rr := range rrs {
		if rr.Header().Rrtype == dns.TypeSOA {
			soas++
		}
	}
	if len(rrs) < 2 || rrs[0].Header().Rrtype != dns.TypeSOA || rrs[len(rrs)-1].Header().Rrtype != dns.TypeSOA || soas != 2 {
		t.Errorf("AXFR %s from %s: %d records, %d SOA; want the SOA first and last only", zone, server, len(rrs), soas)
	}
	return setOf(rrs)
}

// testAXFR: every zone transferred from cnsd holds the same records as
// transferred from Knot and from NSD.
func testAXFR(t *testing.T, r *rig) {
	for _, zone := range r.names {
		want := axfr(t, "cnsd", r.cnsd.String(), zone)
		for _, s := range r.servers()[1:] {
			if got := axfr(t, s.name, s.addr, zone); !maps.Equal(got, want) {
				t.Errorf("AXFR %s: %s differs from cnsd (- cnsd only, + %s only):\n%s", zone, s.name, s.name, want.diff(got))
			}
		}
	}
}

// testIXFR changes changedZone and checks that the IXFR from the old
// serial, applied to the old zone, gives the new AXFR; that Knot and NSD
// follow (they transfer by IXFR after cnsd's NOTIFY) and serve the same
// zone; and the NOTIFY cnsd sent the catcher.
func testIXFR(t *testing.T, r *rig) {
	zone := changedZone
	old := axfr(t, "cnsd", r.cnsd.String(), zone)
	oldSerial := uint32(r.st.Snapshot(zone).Serial())
	notified := r.notify.count()
	recs := slices.DeleteFunc(slices.Clone(r.zones[zone]), func(rec store.Record) bool {
		return uint16(rec.Type) == dns.TypeTXT && strings.HasPrefix(rec.Name, "db0.")
	})
	if len(recs) == len(r.zones[zone]) {
		t.Fatalf("no TXT record of db0 in %s to remove", zone)
	}
	recs = append(recs, store.NewRecord("new0.inst.alice."+zone, dns.TypeA, "10.20.0.99", source),
		store.NewRecord("new0.inst.alice."+zone, dns.TypeTXT, `"conformance"`, source))
	changed := maps.Clone(r.zones)
	changed[zone] = recs
	if _, err := r.st.CommitSource(t.Context(), source, changed); err != nil {
		t.Fatal(err)
	}
	newSerial := uint32(r.st.Snapshot(zone).Serial())
	if newSerial == oldSerial {
		t.Fatalf("the commit did not change the serial of %s", zone)
	}
	want := axfr(t, "cnsd", r.cnsd.String(), zone)
	ixfr, err := transfer(r.cnsd.String(), zone, oldSerial)
	if err != nil {
		t.Fatalf("IXFR %s from %d: %v", zone, oldSerial, err)
	}
	got, err := applyIXFR(old, ixfr)
	if err != nil {
		t.Errorf("IXFR %s from %d: %v", zone, oldSerial, err)
	} else if !maps.Equal(got, want) {
		t.Errorf("IXFR %s from %d applied to the old zone differs from the new AXFR (- applied, + AXFR):\n%s", zone, oldSerial, got.diff(want))
	}
	for _, s := range []struct {
		name string
		wait func(testing.TB, string, uint32, time.Duration) uint32
		addr string
	}{{"knot", r.knot.WaitSerial, r.knot.Addr().String()}, {"nsd", r.nsd.WaitSerial, r.nsd.Addr().String()}} {
		s.wait(t, zone, newSerial, waitTimeout)
		if got := axfr(t, s.name, s.addr, zone); !maps.Equal(got, want) {
			t.Errorf("after IXFR, AXFR %s: %s differs from cnsd (- cnsd only, + %s only):\n%s", zone, s.name, s.name, want.diff(got))
		}
	}
	checkNotify(t, r.notify.wait(zone, notified, waitTimeout), zone, newSerial)
}

// applyIXFR applies an IXFR response (RFC 1995 §4) to the zone old: a
// sequence of differences, or the whole zone in AXFR form.
func applyIXFR(old zoneSet, rrs []dns.RR) (zoneSet, error) {
	if len(rrs) < 2 || rrs[0].Header().Rrtype != dns.TypeSOA {
		return nil, fmt.Errorf("%d records, not starting with the SOA", len(rrs))
	}
	if rrs[1].Header().Rrtype != dns.TypeSOA {
		return setOf(rrs), nil // the whole zone
	}
	last := rrs[len(rrs)-1]
	if last.Header().Rrtype != dns.TypeSOA || last.(*dns.SOA).Serial != rrs[0].(*dns.SOA).Serial {
		return nil, fmt.Errorf("does not end with the new SOA")
	}
	z := maps.Clone(old)
	line := func(rr dns.RR) string { return strings.ToLower(strings.ReplaceAll(rr.String(), "\t", " ")) }
	adding := true // the first SOA toggles it: removals come first
	for _, rr := range rrs[1 : len(rrs)-1] {
		if rr.Header().Rrtype == dns.TypeSOA {
			// Each difference: old SOA, removals, new SOA, additions.
			adding = !adding
			if adding {
				z[line(rr)] = true
			} else {
				delete(z, line(rr))
			}
			continue
		}
		if adding {
			z[line(rr)] = true
		} else if !z[line(rr)] {
			return nil, fmt.Errorf("removes %s, which the old zone does not hold", line(rr))
		} else {
			delete(z, line(rr))
		}
	}
	return z, nil
}

// checkNotify checks the NOTIFY cnsd sent for zone at serial (RFC 1996
// §3.7): opcode NOTIFY, AA set, QR clear, the question zone SOA IN, and
// an answer section that is empty or holds the zone's SOA (optional).
func checkNotify(t *testing.T, m *dns.Msg, zone string, serial uint32) {
	t.Helper()
	if m == nil {
		t.Errorf("no NOTIFY about %s reached the catcher within %v", zone, waitTimeout)
		return
	}
	var bad []string
	if m.Opcode != dns.OpcodeNotify {
		bad = append(bad, "opcode "+opcodeName(m.Opcode))
	}
	if !m.Authoritative || m.Response {
		bad = append(bad, fmt.Sprintf("AA %v QR %v", m.Authoritative, m.Response))
	}
	if len(m.Question) != 1 || m.Question[0].Qtype != dns.TypeSOA || m.Question[0].Qclass != dns.ClassINET ||
		dns.CanonicalName(m.Question[0].Name) != zone {
		bad = append(bad, fmt.Sprintf("question %v", m.Question))
	}
	switch {
	case len(m.Answer) == 0:
	case len(m.Answer) == 1 && m.Answer[0].Header().Rrtype == dns.TypeSOA &&
		dns.CanonicalName(m.Answer[0].Header().Name) == zone && m.Answer[0].(*dns.SOA).Serial == serial:
	default:
		bad = append(bad, fmt.Sprintf("answer %v, want none or the SOA at serial %d", m.Answer, serial))
	}
	if len(m.Ns) != 0 {
		bad = append(bad, fmt.Sprintf("authority %v", m.Ns))
	}
	if len(bad) > 0 {
		t.Errorf("NOTIFY %s: %s\n%v", zone, strings.Join(bad, "; "), m)
	}
}
