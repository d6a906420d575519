package secondarytest_test

import (
	"context"
	"fmt"
	"log/slog"
	"net"
	"net/netip"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/miekg/dns"

	"github.com/cnsd/cnsd/schema"
	"github.com/cnsd/cnsd/store"
	"github.com/cnsd/cnsd/xfr"
	"github.com/cnsd/cnsd/xfr/secondarytest"
)

// waitTimeout bounds every wait for a secondary: generous, because the
// machine running the tests may be small and busy.
const waitTimeout = 30 * time.Second

// source is the contributor the tests' records come from.
const source = "secondarytest"

// cnsd is an xfr.Server under test, listening on 127.0.0.1 before it
// runs, so that secondaries can be configured with its address first.
type cnsd struct {
	addr netip.AddrPort
	pc   net.PacketConn
	l    net.Listener
	srv  *xfr.Server
	// counted are the server's transfer counts transfersAre has already
	// accounted for.
	counted xfr.TransferCounts
}

// listenCNSD binds cnsd's UDP and TCP sockets on one port of 127.0.0.1.
func listenCNSD(t *testing.T) *cnsd {
	t.Helper()
	return listenCNSDOn(t, netip.AddrFrom4([4]byte{127, 0, 0, 1}))
}

// listenCNSDOn is listenCNSD on the address host.
func listenCNSDOn(t *testing.T, host netip.Addr) *cnsd {
	t.Helper()
	pc, l := secondarytest.ListenPairOn(t, host)
	return &cnsd{addr: netip.MustParseAddrPort(pc.LocalAddr().String()), pc: pc, l: l}
}

// run starts the server over src with cfg until the test ends. Options
// not set by the caller are shortened for tests.
func (c *cnsd) run(t *testing.T, cfg *schema.Config, src xfr.Source, opts xfr.Options) {
	t.Helper()
	opts.PacketConns = []net.PacketConn{c.pc}
	opts.Listeners = []net.Listener{c.l}
	if opts.NotifyTimeout == 0 {
		opts.NotifyTimeout = time.Second
	}
	if opts.NotifyBackoff == 0 {
		opts.NotifyBackoff = 100 * time.Millisecond
	}
	// A NOTIFY for a new serial waits until the SOA poll after the last
	// one: keep that short, the tests commit again as soon as a
	// secondary has caught up.
	if opts.PollInterval == 0 {
		opts.PollInterval = 20 * time.Millisecond
	}
	log := slog.New(slog.NewTextHandler(t.Output(), &slog.HandlerOptions{Level: slog.LevelWarn}))
	c.srv = xfr.New(cfg, src, opts, log)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- c.srv.Run(ctx) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("xfr.Server.Run: %v", err)
		}
	})
}

// query asks cnsd for name and type.
func (c *cnsd) query(t *testing.T, name, qtype string) *dns.Msg {
	t.Helper()
	r, err := secondarytest.Exchange(c.addr.String(), name, qtype, 2*time.Second)
	if err != nil {
		t.Fatalf("cnsd: %v", err)
	}
	return r
}

// parseConfig is schema.Parse of a configuration written for the test.
func parseConfig(t *testing.T, format string, args ...any) *schema.Config {
	t.Helper()
	text := fmt.Sprintf(format, args...)
	cfg, err := schema.Parse([]byte(text))
	if err != nil {
		t.Fatalf("schema.Parse: %v\n%s", err, text)
	}
	return cfg
}

// peer is how the configuration names a secondary listening on a port
// other than 53.
func peer(s *secondarytest.Secondary) string { return s.Addr().String() }

func openStore(t *testing.T, opts store.Options) *store.Store {
	t.Helper()
	st, err := store.Open(t.Context(), store.NewMemory(), opts, nil)
	if err != nil {
		t.Fatal(err)
	}
	return st
}

// commit replaces the test's records with zones and returns each changed
// zone's new serial.
func commit(t *testing.T, st *store.Store, zones map[string][]store.Record) map[string]uint32 {
	t.Helper()
	diffs, err := st.CommitSource(t.Context(), source, zones)
	if err != nil {
		t.Fatalf("commit: %v", err)
	}
	out := map[string]uint32{}
	for _, d := range diffs {
		out[d.Zone] = uint32(d.To)
	}
	return out
}

// setType sets a record's type from a dns.Type* constant without naming
// zonegen, which xfr's tests may not import.
func setType[T ~uint16](p *T, v uint16) { *p = T(v) }

// rec is a record of the test's source.
func rec(name string, qtype uint16, data string) store.Record {
	r := store.Record{Name: name, Data: data, Source: source}
	setType(&r.Type, qtype)
	return r
}

// answer is what a comparison looks at in a response: the rcode and the
// answer section's records in any order, TTLs aside.
func answer(r *dns.Msg) string {
	return dns.RcodeToString[r.Rcode] + " " + strings.Join(secondarytest.RRsets(r.Answer), " | ")
}

// sameAnswers checks that the secondary answers like cnsd for each name
// and type.
func sameAnswers(t *testing.T, c *cnsd, s *secondarytest.Secondary, names []string, qtypes ...string) {
	t.Helper()
	for _, name := range names {
		for _, qt := range qtypes {
			want := answer(c.query(t, name, qt))
			got := answer(s.Query(t, name, qt))
			// NSD reloads a zone by starting new server processes beside
			// the old ones, which answer from the former data until they
			// have wound down: the new SOA may be seen before the last old
			// answer. An answer that is still wrong after that is one.
			for deadline := time.Now().Add(oldServersWindDown); got != want && s.Kind() == "nsd" && time.Now().Before(deadline); {
				time.Sleep(20 * time.Millisecond)
				got = answer(s.Query(t, name, qt))
			}
			if got != want {
				t.Errorf("%s %s %s: %s\n cnsd answers %s", s.Kind(), name, qt, got, want)
			}
		}
	}
}

// oldServersWindDown bounds how long NSD's server processes of before a
// reload may go on answering.
const oldServersWindDown = 2 * time.Second

// transfersAre checks transfers of zone by the secondary s from c (got,
// some or all of s.Transfers): one per serial in serials, the first of
// kind first and every later one an IXFR. When s does not log which kind
// a transfer was, c's own counts of the transfers it served since the
// last check tell instead.
func transfersAre(t *testing.T, c *cnsd, s *secondarytest.Secondary, got []secondarytest.Transfer, zone, first string, serials []uint32) {
	t.Helper()
	var want []secondarytest.Transfer
	for i, serial := range serials {
		kind := "IXFR"
		if i == 0 {
			kind = first
		}
		if !s.LogsTransferKinds() {
			kind = ""
		}
		want = append(want, secondarytest.Transfer{Zone: dns.Fqdn(zone), Kind: kind, Serial: serial})
	}
	if !s.LogsTransferKinds() {
		now := c.srv.TransferCounts()
		axfr, ixfr := now.AXFR-c.counted.AXFR, now.IXFR-c.counted.IXFR
		c.counted = now
		wantAXFR, wantIXFR := uint64(0), uint64(len(serials))
		if first == "AXFR" && len(serials) > 0 {
			wantAXFR, wantIXFR = 1, wantIXFR-1
		}
		if axfr != wantAXFR || ixfr != wantIXFR {
			t.Errorf("cnsd served %s %d AXFR and %d IXFR, want %d and %d", s.Kind(), axfr, ixfr, wantAXFR, wantIXFR)
		}
	}
	if slices.Equal(got, want) {
		return
	}
	for i := range max(len(got), len(want)) {
		var g, w secondarytest.Transfer
		if i < len(got) {
			g = got[i]
		}
		if i < len(want) {
			w = want[i]
		}
		if g != w {
			t.Errorf("%s transfers of %s: %d logged, %d expected; #%d is %+v, want %+v",
				s.Kind(), zone, len(got), len(want), i, g, w)
			return
		}
	}
}

// secondaryKind is one kind of secondary the integration tests run.
type secondaryKind struct {
	name  string
	start func(testing.TB, secondarytest.Config) *secondarytest.Secondary
	// commits is how many commits TestFollowCommits makes. PowerDNS acts
	// on a NOTIFY only at its next once-a-second check (with a check
	// interval of 0 it spins), so it gets fewer.
	commits int
}

// secondaries are the kinds every integration test runs against.
var secondaries = []secondaryKind{
	{"bind", secondarytest.StartBIND, 200},
	{"knot", secondarytest.StartKnot, 200},
	{"nsd", secondarytest.StartNSD, 200},
	{"powerdns", secondarytest.StartPowerDNS, 20},
}
