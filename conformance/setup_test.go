package conformance

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/netip"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/miekg/dns"

	"github.com/cnsd/cnsd/schema"
	"github.com/cnsd/cnsd/store"
	"github.com/cnsd/cnsd/xfr"
	"github.com/cnsd/cnsd/xfr/secondarytest"
)

// realisticGolden holds every zone cnsd serves over the realistic
// simulated cloud (cmd/cnsd's TestDaemonOverRealisticCloud writes it):
// instance and service names, SRV, TXT, CMON CNAMEs, reverse zones of
// both families and the catalog zone.
const realisticGolden = "../cmd/cnsd/testdata/realistic.golden"

// source is the contributor the test's records come from.
const source = "conformance"

// waitTimeout bounds every wait for a secondary.
const waitTimeout = 60 * time.Second

// forwardZones are the golden file's forward zones.
var forwardZones = []string{"dc1.cns.example.test.", "int.cns.example.test.", "user.cns.example.test."}

// changedZone is the zone the IXFR check changes and whose NOTIFY the
// test captures.
const changedZone = "int.cns.example.test."

// loadZones reads the golden file: zone → its records but the SOA,
// which cnsd builds from the configuration and the store's serial.
func loadZones(t *testing.T) map[string][]store.Record {
	t.Helper()
	f, err := os.Open(realisticGolden)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	zones, err := parseGolden(f)
	if err != nil {
		t.Fatalf("%s: %v", realisticGolden, err)
	}
	return zones
}

// parseGolden parses "; zone <name>" headers followed by records in
// presentation form, one a line with tab-separated fields.
func parseGolden(r io.Reader) (map[string][]store.Record, error) {
	zones := map[string][]store.Record{}
	zone := ""
	sc := bufio.NewScanner(r)
	for n := 1; sc.Scan(); n++ {
		line := sc.Text()
		if name, ok := strings.CutPrefix(line, "; zone "); ok {
			zone = dns.Fqdn(name)
			continue
		}
		if line == "" {
			continue
		}
		f := strings.SplitN(line, "\t", 5)
		if len(f) != 5 || zone == "" {
			return nil, fmt.Errorf("line %d: not a record of a zone: %q", n, line)
		}
		t, ok := dns.StringToType[f[3]]
		if !ok {
			return nil, fmt.Errorf("line %d: unknown type %q", n, f[3])
		}
		if t != dns.TypeSOA {
			zones[zone] = append(zones[zone], store.NewRecord(f[0], t, f[4], source))
		}
	}
	return zones, sc.Err()
}

// rig is cnsd, Knot and NSD serving the same zones.
type rig struct {
	st     *store.Store
	cnsd   netip.AddrPort
	knot   *secondarytest.Secondary
	nsd    *secondarytest.Secondary
	zones  map[string][]store.Record // what was committed first
	names  []string                  // every zone served
	notify *notifyCatcher
}

// servers are the three servers in the order the comparisons list them.
func (r *rig) servers() []target {
	return []target{
		{name: "cnsd", addr: r.cnsd.String()},
		{name: "knot", addr: r.knot.Addr().String()},
		{name: "nsd", addr: r.nsd.Addr().String()},
	}
}

// startRig commits the golden zones to a memory store, starts Knot and
// NSD as secondaries of cnsd's address, then cnsd itself with both (and
// the NOTIFY catcher for changedZone) as its peers, and waits until both
// secondaries serve every zone at cnsd's serial.
func startRig(t *testing.T) *rig {
	t.Helper()
	r := &rig{zones: loadZones(t)}
	st, err := store.Open(t.Context(), store.NewMemory(), store.Options{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := st.CommitSource(t.Context(), source, r.zones); err != nil {
		t.Fatal(err)
	}
	r.st = st
	r.names = slices.Sorted(func(yield func(string) bool) {
		for z := range r.zones {
			if !yield(z) {
				return
			}
		}
	})
	pc, l := secondarytest.ListenPair(t)
	r.cnsd = netip.MustParseAddrPort(pc.LocalAddr().String())
	sc := secondarytest.Config{Primary: r.cnsd, Zones: r.names, AllowTransfer: true, NoRateLimit: true}
	r.knot = secondarytest.StartKnot(t, sc)
	r.nsd = secondarytest.StartNSD(t, sc)
	r.notify = catchNotify(t)
	r.notify.setUpstream(r.cnsd.String())
	cfg := config(t, peer(r.knot.Addr()), peer(r.nsd.Addr()), r.notify.addr())
	runCNSD(t, cfg, st, pc, l)
	for _, z := range r.names {
		serial := uint32(st.Snapshot(z).Serial())
		r.knot.WaitSerial(t, z, serial, waitTimeout)
		r.nsd.WaitSerial(t, z, serial, waitTimeout)
	}
	return r
}

func peer(a netip.AddrPort) string { return strconv.Quote(a.String()) }

// config is cnsd's configuration for the golden zones: the apex values
// the golden file shows, the two secondaries as peers of every zone and
// the NOTIFY catcher of changedZone too, transfers from loopback, and no
// response rate limiting (the test sends many queries from one address,
// and Knot and NSD run without theirs).
func config(t *testing.T, knot, nsd, catcher string) *schema.Config {
	t.Helper()
	peers := knot + ", " + nsd
	var fwd []string
	for i, z := range forwardZones {
		// The networks do not matter: the zones' records are in the
		// store already. One zone may be the catch-all.
		network := fmt.Sprintf("a1b2c3d4-0000-4000-8000-%012d", i)
		p := peers
		if z == changedZone {
			p += ", " + catcher
		}
		fwd = append(fwd, fmt.Sprintf(`%q: {"networks": [%q], "peers": [%s]}`, strings.TrimSuffix(z, "."), network, p))
	}
	doc := fmt.Sprintf(`{
  "my_name": "ns1.example.test",
  "hostmaster": "hostmaster@example.test",
  "forward_zones": {%s},
  "reverse_zones": {"peers": [%s]},
  "catalog_zone": {"peers": [%s]},
  "allow_transfer": ["127.0.0.0/8"],
  "rrl": {"disabled": true},
  "ttl": {"record": 30, "ns": 3600, "soa_minimum": 30}
}`, strings.Join(fwd, ", "), peers, peers)
	cfg, err := schema.Parse([]byte(doc))
	if err != nil {
		t.Fatalf("cnsd configuration: %v\n%s", err, doc)
	}
	return cfg
}

// runCNSD runs xfr.Server over st on the sockets given until the test
// ends, logging warnings and errors to the test's output.
func runCNSD(t *testing.T, cfg *schema.Config, st *store.Store, pc net.PacketConn, l net.Listener) {
	t.Helper()
	opts := xfr.Options{
		PacketConns:   []net.PacketConn{pc},
		Listeners:     []net.Listener{l},
		NotifyTimeout: time.Second,
		NotifyBackoff: 100 * time.Millisecond,
		PollInterval:  100 * time.Millisecond,
	}
	log := slog.New(slog.NewTextHandler(t.Output(), &slog.HandlerOptions{Level: slog.LevelError}))
	srv := xfr.New(cfg, st, opts, log)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- srv.Run(ctx) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("xfr.Server.Run: %v", err)
		}
	})
}
