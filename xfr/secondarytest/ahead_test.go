package secondarytest_test

import (
	"context"
	"errors"
	"log/slog"
	"net"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/miekg/dns"

	"github.com/cnsd/cnsd/logtest"
	"github.com/cnsd/cnsd/schema"
	"github.com/cnsd/cnsd/store"
	"github.com/cnsd/cnsd/xfr"
	"github.com/cnsd/cnsd/xfr/secondarytest"
)

// swappable is a Source whose store can be replaced while the server
// runs, as cmd/cnsd's is: here to put a store that lost its last writes
// under a running server.
type swappable struct {
	cur atomic.Pointer[store.Store]

	mu       sync.Mutex
	watchers []chan struct{}
}

var _ xfr.Raiser = (*swappable)(nil)

func (s *swappable) Snapshot(zone string) *store.Snapshot { return s.cur.Load().Snapshot(zone) }
func (s *swappable) Zones() []string                      { return s.cur.Load().Zones() }

func (s *swappable) Watch() <-chan struct{} {
	ch := make(chan struct{}, 1)
	s.mu.Lock()
	s.watchers = append(s.watchers, ch)
	s.mu.Unlock()
	return ch
}

func (s *swappable) RaiseSerial(ctx context.Context, zone string, above store.Serial) (store.Serial, bool, error) {
	return s.cur.Load().RaiseSerial(ctx, zone, above)
}

// follow makes st current and passes its changes on until ctx ends.
func (s *swappable) follow(ctx context.Context, st *store.Store) {
	changed := st.Watch()
	defer st.Unwatch(changed)
	s.cur.Store(st)
	for {
		s.mu.Lock()
		for _, ch := range s.watchers {
			select {
			case ch <- struct{}{}:
			default:
			}
		}
		s.mu.Unlock()
		select {
		case <-ctx.Done():
			return
		case <-changed:
		}
	}
}

// TestSecondaryAhead: a secondary holds the zone at a serial the store
// no longer has — the store lost its last commits (a Redis crash with RDB
// persistence) and is back an hour earlier, with other records. cnsd logs
// the error once naming the zone and the secondary, counts it, moves the
// serial one past the secondary's, and the secondary transfers the zone
// again and serves cnsd's records.
func TestSecondaryAhead(t *testing.T) {
	for _, sec := range secondaries[:2] { // BIND and Knot
		t.Run(sec.name, func(t *testing.T) {
			const zone = "fwd.cnsd.test."
			now := time.Now()
			before := openStore(t, store.Options{Clock: func() time.Time { return now }})
			high := commit(t, before, map[string][]store.Record{zone: {rec("www."+zone, dns.TypeA, "192.0.2.1")}})[zone]
			lost := openStore(t, store.Options{Clock: func() time.Time { return now.Add(-time.Hour) }})
			low := commit(t, lost, map[string][]store.Record{zone: {rec("www."+zone, dns.TypeA, "192.0.2.2")}})[zone]
			if !store.Serial(low).Less(store.Serial(high)) {
				t.Fatalf("the test's serials: %d is not below %d", low, high)
			}

			c := listenCNSD(t)
			s := sec.start(t, secondarytest.Config{Primary: c.addr, Zones: []string{zone}})
			cfg := parseConfig(t, `{"my_name": "ns1.cnsd.test", "hostmaster": "hostmaster@cnsd.test",
				"forward_zones": {"fwd.cnsd.test": {"networks": ["*"], "peers": [%q]}}}`, peer(s))
			src := &swappable{}
			src.cur.Store(before)
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			var following sync.WaitGroup
			following.Go(func() { src.follow(ctx, before) })
			logs := &logtest.Buffer{}
			srv := runLogged(t, c, cfg, src, logs)
			s.WaitSerial(t, zone, high, waitTimeout)

			cancel()
			following.Wait()
			ctx, cancel = context.WithCancel(context.Background())
			defer cancel()
			go src.follow(ctx, lost)

			s.WaitSerial(t, zone, high+1, waitTimeout)
			s.WaitAnswer(t, "www."+zone, "A", waitTimeout, func(r *dns.Msg) bool {
				return strings.Contains(answer(r), "192.0.2.2")
			})
			// The journal never had the secondary's serial: it gets the
			// whole zone.
			if got := s.Transfers(zone); len(got) == 0 || got[len(got)-1] != (secondarytest.Transfer{Zone: zone, Kind: "AXFR", Serial: high + 1}) {
				t.Errorf("%s transfers %v, want the last one the whole zone at %d", sec.name, got, high+1)
			}
			if got := uint32(lost.Snapshot(zone).Serial()); got != high+1 {
				t.Errorf("serial %d, want %d: one past the secondary's %d", got, high+1, high)
			}
			errs := logs.Lines("level=ERROR", "secondary serves a serial ahead", "zone="+zone, "peer="+peer(s))
			if len(errs) != 1 {
				t.Errorf("error lines: %q, want one naming the zone and the secondary", errs)
			}
			var incidents uint64
			for _, p := range srv.Peers() {
				for _, z := range p.Zones {
					if p.Addr == peer(s) && z.Zone == zone {
						incidents = z.AheadIncidents
					}
				}
			}
			if incidents != 1 {
				t.Errorf("%d incidents counted, want 1", incidents)
			}
		})
	}
}

// runLogged runs an xfr.Server over src on c's sockets, its log going to
// logs, until the test ends.
func runLogged(t *testing.T, c *cnsd, cfg *schema.Config, src xfr.Source, logs *logtest.Buffer) *xfr.Server {
	t.Helper()
	opts := xfr.Options{PacketConns: []net.PacketConn{c.pc}, Listeners: []net.Listener{c.l},
		NotifyTimeout: time.Second, NotifyBackoff: 100 * time.Millisecond, PollInterval: 20 * time.Millisecond}
	srv := xfr.New(cfg, src, opts, slog.New(slog.NewTextHandler(logs, nil)))
	c.srv = srv
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- srv.Run(ctx) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil && !errors.Is(err, context.Canceled) {
			t.Errorf("xfr.Server.Run: %v", err)
		}
		if t.Failed() {
			t.Logf("cnsd log:\n%s", logs.String())
		}
	})
	return srv
}
