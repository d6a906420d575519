package xfr

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/miekg/dns"

	"github.com/cnsd/cnsd/store"
)

// runCatalog runs a catalog maintainer until the test ends.
func runCatalog(t *testing.T, c *Catalog) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- c.Run(ctx) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; !errors.Is(err, context.Canceled) {
			t.Errorf("Run: %v", err)
		}
	})
}

// catalogRRs returns the catalog zone's records as "name TYPE data".
func catalogRRs(src *store.Store, zone string) []string {
	snap := src.Snapshot(zone)
	if snap == nil {
		return nil
	}
	var out []string
	for r := range snap.All() {
		out = append(out, r.Name+"\t"+dns.Type(r.Type).String()+"\t"+r.Data)
	}
	return out
}

func TestCatalog(t *testing.T) {
	const cat = "catalog.cnsd.invalid."
	src := testStore(t, map[string][]string{"example.test.": {"a A 192.0.2.1"}, "sub.example.test.": {"x A 192.0.2.9"}})
	c := NewCatalog(testConfig(t, ""), src, nil)
	runCatalog(t, c)
	ptr := func(zone string) string { return memberID(zone) + ".zones." + cat + "\tPTR\t" + zone }
	version := "version." + cat + "\tTXT\t\"2\""
	ns := cat + "\tNS\tinvalid."
	// empty.test is configured but has no record: it is kept, and listed.
	want := []string{ptr("example.test."), ptr("sub.example.test."), ptr("empty.test."), version, ns}
	slices.Sort(want)
	eventually(t, "the catalog", func() bool {
		got := catalogRRs(src, cat)
		slices.Sort(got)
		return slices.Equal(got, want)
	}, func() string { return fmtList(catalogRRs(src, cat)) })
	serial := src.Snapshot(cat).Serial()

	// A new reverse zone joins; a change inside a zone rewrites nothing.
	if _, err := src.CommitSource(context.Background(), "other", map[string][]store.Record{
		"example.test.":         {rec("b.example.test.", "A", "192.0.2.2")},
		"2.0.192.in-addr.arpa.": {rec("2.2.0.192.in-addr.arpa.", "PTR", "b.example.test.")}}); err != nil {
		t.Fatal(err)
	}
	want = append(want, ptr("2.0.192.in-addr.arpa."))
	slices.Sort(want)
	eventually(t, "the reverse zone in the catalog", func() bool {
		got := catalogRRs(src, cat)
		slices.Sort(got)
		return slices.Equal(got, want)
	}, func() string { return fmtList(catalogRRs(src, cat)) })
	if next := src.Snapshot(cat).Serial(); next == serial {
		t.Fatal("the catalog's serial did not change with its members")
	}

	// Disabled: the catalog zone's records go, and with them the zone.
	c.SetConfig(testConfig(t, `, "catalog_zone": {"disabled": true}`))
	eventually(t, "the catalog zone to go", func() bool { return src.Snapshot(cat) == nil })
	// empty.test holds only its NS records, from the configuration.
	if got := catalogRRs(src, "empty.test."); !slices.Equal(got, []string{"empty.test.\tNS\tns.example.test."}) {
		t.Fatalf("empty.test holds %q, want its NS record only", got)
	}
}

func TestMemberIDs(t *testing.T) {
	a, b := memberID("example.test."), memberID("Example.TEST.")
	if a != b || len(a) != 16 || memberID("other.test.") == a {
		t.Fatalf("ids %s %s %s: want stable, case-insensitive, 16 hex digits, distinct", a, b, memberID("other.test."))
	}
}

func fmtList(l []string) string {
	out := ""
	for _, s := range l {
		out += "\n" + s
	}
	return out
}

// TestNSFollowConfig: the NS records of a forward zone live in the store,
// so a new secondary in the configuration is a new serial whose IXFR
// carries the NS record, and an AXFR lists each NS record once.
func TestNSFollowConfig(t *testing.T) {
	src := testStore(t, map[string][]string{"example.test.": {"a A 192.0.2.1"}})
	cfg := testConfig(t, loopbackTransfers)
	c := NewCatalog(cfg, src, nil)
	runCatalog(t, c)
	addr, s := serve(t, cfg, src, Options{})
	nsOf := func() []string {
		return slices.DeleteFunc(catalogRRs(src, "example.test."), func(l string) bool { return !strings.Contains(l, "\tNS\t") })
	}
	eventually(t, "the NS records in the store", func() bool {
		return slices.Equal(nsOf(), []string{"example.test.\tNS\tns.example.test.", "example.test.\tNS\tns2.example.test."})
	}, func() string { return fmtList(catalogRRs(src, "example.test.")) })
	before := uint32(src.Snapshot("example.test.").Serial())

	next := testConfig(t, loopbackTransfers)
	for i := range next.ForwardZones {
		if next.ForwardZones[i].Name == "example.test" {
			next.ForwardZones[i].Peers = []string{"ns2.example.test", "ns3.example.test"}
		}
	}
	s.SetConfig(next)
	c.SetConfig(next)
	eventually(t, "a new serial", func() bool { return uint32(src.Snapshot("example.test.").Serial()) != before })
	got, _, _ := transfer(t, addr, "example.test.", true, before, nil)
	want := "example.test. 3600 IN NS ns3.example.test."
	if g := rrStrings(got); len(g) != 5 || g[3] != want {
		t.Fatalf("IXFR %q, want the new NS record %q added", g, want)
	}
	all, _, _ := transfer(t, addr, "example.test.", false, 0, nil)
	ns := 0
	for _, rr := range all {
		if rr.Header().Rrtype == dns.TypeNS {
			ns++
		}
	}
	if ns != 3 {
		t.Fatalf("AXFR has %d NS records, want 3:\n%q", ns, rrStrings(all))
	}
}

// TestReverseNSFollowConfig: a reverse zone's NS records are stored once
// it holds a VM's record, so a secondary added to reverse_zones is a new
// serial whose IXFR carries the NS record; when the last VM record goes,
// the zone goes with its NS records.
func TestReverseNSFollowConfig(t *testing.T) {
	const rev = "2.0.192.in-addr.arpa."
	src := testStore(t, map[string][]string{"example.test.": {"a A 192.0.2.1"}})
	cfg := testConfig(t, loopbackTransfers+`, "reverse_zones": {"peers": ["ns2.example.test"]}`)
	c := NewCatalog(cfg, src, nil)
	runCatalog(t, c)
	addr, s := serve(t, cfg, src, Options{})
	commitLines(t, src, rev, []string{"1 PTR a.example.test."})
	nsOf := func() []string {
		return slices.DeleteFunc(catalogRRs(src, rev), func(l string) bool { return !strings.Contains(l, "\tNS\t") })
	}
	eventually(t, "the reverse zone's NS records in the store", func() bool {
		return slices.Equal(nsOf(), []string{rev + "\tNS\tns.example.test.", rev + "\tNS\tns2.example.test."})
	}, func() string { return fmtList(catalogRRs(src, rev)) })
	before := uint32(src.Snapshot(rev).Serial())

	next := testConfig(t, loopbackTransfers+`, "reverse_zones": {"peers": ["ns2.example.test", "ns3.example.test"]}`)
	s.SetConfig(next)
	c.SetConfig(next)
	eventually(t, "a new serial of the reverse zone", func() bool { return uint32(src.Snapshot(rev).Serial()) != before })
	got, _, _ := transfer(t, addr, rev, true, before, nil)
	want := rev + " 3600 IN NS ns3.example.test."
	if g := rrStrings(got); len(g) != 5 || g[3] != want {
		t.Fatalf("IXFR %q, want the new NS record %q added", g, want)
	}

	commitLines(t, src, rev, nil)
	eventually(t, "the reverse zone to go with its last VM record", func() bool { return src.Snapshot(rev) == nil },
		func() string { return fmtList(catalogRRs(src, rev)) })
}
