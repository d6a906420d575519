package xfr

import (
	"context"
	"fmt"
	"slices"
	"testing"

	"github.com/miekg/dns"

	"github.com/cnsd/cnsd/store"
)

// commitLines replaces the test source's records of zone and returns the
// zone's serial after it, 0 when the zone is gone.
func commitLines(t *testing.T, src *store.Store, zone string, lines []string) uint32 {
	t.Helper()
	var recs []store.Record
	for _, l := range lines {
		var name, typ, data string
		if _, err := fmt.Sscanf(l, "%s %s %s", &name, &typ, &data); err != nil {
			t.Fatal(err)
		}
		recs = append(recs, rec(name+"."+zone, typ, data))
	}
	if _, err := src.CommitSource(context.Background(), "test", map[string][]store.Record{zone: recs}); err != nil {
		t.Fatal(err)
	}
	// A zone whose last records went may be gone already: the catalog,
	// seeing no VM record left, drops its NS records on its own, as soon
	// as the commit is published.
	if snap := src.Snapshot(zone); snap != nil {
		return uint32(snap.Serial())
	}
	return 0
}

func TestIXFR(t *testing.T) {
	const zone = "example.test."
	base := []string{"a A 192.0.2.1", "b A 192.0.2.2", "c A 192.0.2.3", "d A 192.0.2.4", "e A 192.0.2.5"}
	src := testStore(t, nil)
	s0 := commitLines(t, src, zone, base)
	s1 := commitLines(t, src, zone, append(slices.Clone(base), "f A 192.0.2.6"))
	s2 := commitLines(t, src, zone, append(slices.Clone(base[1:]), "f A 192.0.2.6"))
	addr, _ := serve(t, testConfig(t, loopbackTransfers), src, Options{})
	soa := func(serial uint32) string { return fmt.Sprintf(exampleSOA, serial) }
	full := func() []string {
		out := []string{soa(s2), "example.test. 3600 IN NS ns.example.test.", "example.test. 3600 IN NS ns2.example.test."}
		for _, l := range []string{"b A 192.0.2.2", "c A 192.0.2.3", "d A 192.0.2.4", "e A 192.0.2.5", "f A 192.0.2.6"} {
			var n, ty, d string
			fmt.Sscanf(l, "%s %s %s", &n, &ty, &d)
			out = append(out, fmt.Sprintf("%s.example.test. 30 IN %s %s", n, ty, d))
		}
		return append(out, soa(s2))
	}()
	cases := []struct {
		name string
		from uint32
		udp  bool
		want []string
	}{
		{name: "current", from: s2, want: []string{soa(s2)}},
		{name: "client ahead", from: s2 + 5, want: []string{soa(s2)}},
		{name: "one serial behind", from: s1, want: []string{soa(s2), soa(s1), "a.example.test. 30 IN A 192.0.2.1", soa(s2), soa(s2)}},
		{name: "condensed over two serials", from: s0, want: []string{soa(s2), soa(s0), "a.example.test. 30 IN A 192.0.2.1",
			soa(s2), "f.example.test. 30 IN A 192.0.2.6", soa(s2)}},
		{name: "not in the journal", from: s0 - 100, want: full},
		{name: "over UDP", from: s0, udp: true, want: []string{soa(s2)}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var got []dns.RR
			if tc.udp {
				m := new(dns.Msg)
				m.SetIxfr(zone, tc.from, "ns.example.test.", "hostmaster.example.test.")
				got = exchange(t, "udp", addr, m).Answer
			} else {
				var rcode int
				if got, rcode, _ = transfer(t, addr, zone, true, tc.from, nil); rcode != dns.RcodeSuccess {
					t.Fatalf("rcode %s", dns.RcodeToString[rcode])
				}
			}
			if g := rrStrings(got); !slices.Equal(g, tc.want) {
				t.Fatalf("IXFR from %d:\n got %q\nwant %q", tc.from, g, tc.want)
			}
		})
	}
}

// TestIXFRLargerThanZone: a difference bigger than the zone itself is
// sent as the whole zone.
func TestIXFRLargerThanZone(t *testing.T) {
	const zone = "example.test."
	src := testStore(t, nil)
	s0 := commitLines(t, src, zone, []string{"a A 192.0.2.1", "b A 192.0.2.2", "c A 192.0.2.3"})
	commitLines(t, src, zone, []string{"x A 192.0.2.9"})
	addr, _ := serve(t, testConfig(t, loopbackTransfers), src, Options{})
	got, _, _ := transfer(t, addr, zone, true, s0, nil)
	if len(got) != 5 || got[3].Header().Name != "x.example.test." {
		t.Fatalf("got %q, want the zone of one record in AXFR form", rrStrings(got))
	}
}

// TestIXFRSameSerialTwice: secondaries asking for the changes since the
// same serial get the same answer (the second from diffCache), and a
// commit in between gives the newer changes, not the cached ones.
func TestIXFRSameSerialTwice(t *testing.T) {
	const zone = "example.test."
	base := []string{"a A 192.0.2.1", "b A 192.0.2.2", "c A 192.0.2.3", "d A 192.0.2.4", "e A 192.0.2.5"}
	src := testStore(t, nil)
	s0 := commitLines(t, src, zone, base)
	s1 := commitLines(t, src, zone, append(slices.Clone(base), "f A 192.0.2.6"))
	addr, _ := serve(t, testConfig(t, loopbackTransfers), src, Options{})
	soa := func(serial uint32) string { return fmt.Sprintf(exampleSOA, serial) }
	want1 := []string{soa(s1), soa(s0), soa(s1), "f.example.test. 30 IN A 192.0.2.6", soa(s1)}
	for i := range 2 {
		got, _, _ := transfer(t, addr, zone, true, s0, nil)
		if !slices.Equal(rrStrings(got), want1) {
			t.Fatalf("IXFR %d from %d:\n%v\nwant\n%v", i, s0, rrStrings(got), want1)
		}
	}
	s2 := commitLines(t, src, zone, append(slices.Clone(base), "f A 192.0.2.6", "g A 192.0.2.7"))
	want2 := []string{soa(s2), soa(s0), soa(s2), "f.example.test. 30 IN A 192.0.2.6", "g.example.test. 30 IN A 192.0.2.7", soa(s2)}
	if got, _, _ := transfer(t, addr, zone, true, s0, nil); !slices.Equal(rrStrings(got), want2) {
		t.Fatalf("IXFR from %d after a commit:\n%v\nwant\n%v", s0, rrStrings(got), want2)
	}
}
