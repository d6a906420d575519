package xfr

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"slices"
	"strings"
	"testing"

	"github.com/miekg/dns"

	"github.com/cnsd/cnsd/schema"
	"github.com/cnsd/cnsd/store"
	"github.com/cnsd/cnsd/xfr/secondarytest"
)

// serve runs a Server for cfg over src on loopback until the test ends
// and returns its address.
func serve(t testing.TB, cfg *schema.Config, src Source, opts Options) (string, *Server) {
	t.Helper()
	return serveLogged(t, cfg, src, opts, nil)
}

// serveLogged is serve with the server's log going to log.
func serveLogged(t testing.TB, cfg *schema.Config, src Source, opts Options, log *slog.Logger) (string, *Server) {
	t.Helper()
	pc, l := secondarytest.ListenPair(t)
	opts.PacketConns, opts.Listeners = []net.PacketConn{pc}, []net.Listener{l}
	s := New(cfg, src, opts, log)
	runServer(t, s)
	return pc.LocalAddr().String(), s
}

// runServer runs s until the test ends, and fails the test when Run
// ends with an error other than its cancellation.
func runServer(t testing.TB, s *Server) {
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- s.Run(ctx) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil && !errors.Is(err, context.Canceled) {
			t.Errorf("Run: %v", err)
		}
	})
}

// transfer runs an AXFR or IXFR (from serial, when ixfr) and returns
// every record received, the rcode of a refusal, and the message count.
func transfer(t *testing.T, addr, zone string, ixfr bool, from uint32, key *tsigKey) ([]dns.RR, int, int) {
	t.Helper()
	m := new(dns.Msg)
	if ixfr {
		m.SetIxfr(zone, from, "ns.example.test.", "hostmaster.example.test.")
	} else {
		m.SetAxfr(zone)
	}
	tr := &dns.Transfer{}
	if key != nil {
		m.SetTsig(key.name, key.alg, 300, 0)
		tr.TsigSecret = map[string]string{key.name: key.secret}
	}
	ch, err := tr.In(m, addr)
	if err != nil {
		t.Fatalf("transfer of %s: %v", zone, err)
	}
	var rrs []dns.RR
	msgs := 0
	for env := range ch {
		if env.Error != nil {
			var rcode int
			if _, err := fmt.Sscanf(env.Error.Error(), "dns: bad xfr rcode: %d", &rcode); err == nil {
				return nil, rcode, msgs
			}
			t.Fatalf("transfer of %s: %v", zone, env.Error)
		}
		msgs++
		rrs = append(rrs, env.RR...)
	}
	return rrs, dns.RcodeSuccess, msgs
}

type tsigKey struct{ name, alg, secret string }

func rrStrings(rrs []dns.RR) []string {
	var out []string
	for _, rr := range rrs {
		out = append(out, strings.Join(strings.Fields(rr.String()), " "))
	}
	return out
}

func TestAXFR(t *testing.T) {
	src := testStore(t, queryZones)
	addr, _ := serve(t, testConfig(t, loopbackTransfers), src, Options{})
	got, rcode, _ := transfer(t, addr, "example.test.", false, 0, nil)
	if rcode != dns.RcodeSuccess {
		t.Fatalf("rcode %s", dns.RcodeToString[rcode])
	}
	snap := src.Snapshot("example.test.")
	soa := fmt.Sprintf(exampleSOA, uint32(snap.Serial()))
	want := []string{soa, "example.test. 3600 IN NS ns.example.test.", "example.test. 3600 IN NS ns2.example.test."}
	for r := range snap.All() {
		rr, err := toRR(r, 30)
		if err != nil {
			t.Fatal(err)
		}
		want = append(want, strings.Join(strings.Fields(rr.String()), " "))
	}
	want = append(want, soa)
	if g := rrStrings(got); !slices.Equal(g, want) {
		t.Fatalf("AXFR:\n got %q\nwant %q", g, want)
	}
}

// TestAXFRIsOneSnapshot commits while a long transfer runs: what arrives
// is the zone at the serial the transfer started at, not a mix.
func TestAXFRIsOneSnapshot(t *testing.T) {
	var lines []string
	for i := range 20000 {
		lines = append(lines, fmt.Sprintf("vm%05d A 10.1.%d.%d", i, i/250, i%250+1))
	}
	src := testStore(t, map[string][]string{"example.test.": lines})
	before := src.Snapshot("example.test.")
	addr, _ := serve(t, testConfig(t, loopbackTransfers), src, Options{})

	m := new(dns.Msg)
	m.SetAxfr("example.test.")
	ch, err := (&dns.Transfer{}).In(m, addr)
	if err != nil {
		t.Fatal(err)
	}
	first := <-ch
	if first.Error != nil {
		t.Fatal(first.Error)
	}
	// Replace every record while the rest of the transfer is on its way.
	if _, err := src.CommitSource(context.Background(), "test", map[string][]store.Record{
		"example.test.": {rec("other.example.test.", "A", "192.0.2.1")}}); err != nil {
		t.Fatal(err)
	}
	got := first.RR
	msgs := 1
	for env := range ch {
		if env.Error != nil {
			t.Fatal(env.Error)
		}
		got = append(got, env.RR...)
		msgs++
	}
	if msgs < 10 {
		t.Errorf("%d messages for 20,000 records: want messages of about 16 KiB", msgs)
	}
	if len(got) != before.Len()+4 || got[0].(*dns.SOA).Serial != uint32(before.Serial()) {
		t.Fatalf("got %d records at serial %d, want %d at %d", len(got), got[0].(*dns.SOA).Serial, before.Len()+4, before.Serial())
	}
	for _, rr := range got {
		if rr.Header().Name == "other.example.test." {
			t.Fatal("a record committed after the transfer started was sent")
		}
	}
}

func TestAXFROverUDPAndOutsideZones(t *testing.T) {
	addr, _ := serve(t, testConfig(t, loopbackTransfers), testStore(t, queryZones), Options{})
	cases := []struct {
		name, qname, net string
		want             int
	}{
		{"UDP", "example.test.", "udp", dns.RcodeFormatError},
		{"below an apex", "web.example.test.", "tcp", dns.RcodeNotAuth},
		{"outside every zone", "other.test.", "tcp", dns.RcodeRefused},
		{"zone not in the store yet", "empty.test.", "tcp", dns.RcodeServerFailure},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			m := new(dns.Msg)
			m.SetAxfr(tc.qname)
			r := exchange(t, tc.net, addr, m)
			if r.Rcode != tc.want || len(r.Answer) != 0 {
				t.Fatalf("rcode %s with %d records, want %s", dns.RcodeToString[r.Rcode], len(r.Answer), dns.RcodeToString[tc.want])
			}
		})
	}
}
