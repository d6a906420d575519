package pipeline

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"maps"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cnsd/cnsd/feed"
	"github.com/cnsd/cnsd/logtest"
	"github.com/cnsd/cnsd/mockcloud"
	"github.com/cnsd/cnsd/mockcloud/ufdstest"
	"github.com/cnsd/cnsd/schema"
	"github.com/cnsd/cnsd/store"
	"github.com/cnsd/cnsd/zonegen"
	"golang.org/x/sync/errgroup"
)

// waitLimit bounds every wait for a condition; conditions are polled, so a
// slow machine only makes the tests slower, never wrong.
const waitLimit = 30 * time.Second

// clock is a settable clock for the pipeline and CNAPI's verdicts.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *clock) Add(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}

// world is a simulated cloud (HTTP APIs and a real slapd), the real feed
// clients following it, a pipeline and the store it writes.
type world struct {
	t      testing.TB
	cloud  *mockcloud.Cloud
	http   *httptest.Server
	ldap   *ufdstest.Server
	store  *store.Store
	p      *Pipeline
	clock  *clock
	logs   *logtest.Buffer
	level  slog.Level    // of the log the world writes; Debug unless set
	limit  time.Duration // of every wait; waitLimit unless set
	poll   time.Duration // CNAPI's poll interval; 20 ms unless set
	verify bool          // the pipeline asks VMAPI about held VMs (Config.Verify)
	ufds   *feed.UFDS
	cancel context.CancelFunc
	done   chan error

	// url and ldapURL reach the cloud's HTTP APIs and its UFDS; cloud,
	// http and ldap are nil when it runs in a process of its own
	// (newCloudProcess).
	url, ldapURL string
	// cloudPID is the process of the cloud when it runs in one of its
	// own.
	cloudPID int
}

// startWorld runs everything over fixture f with settings s; the
// pipeline's clock starts at the wall clock's now and moves only when the
// test moves it.
func startWorld(t testing.TB, f *mockcloud.Fixture, s Settings) *world {
	t.Helper()
	w := newWorld(t, f)
	w.start(s, store.NewMemory())
	return w
}

// newWorld starts the simulated cloud only.
func newWorld(t testing.TB, f *mockcloud.Fixture) *world {
	w := &world{t: t, cloud: mockcloud.New(f, nil), logs: &logtest.Buffer{}, clock: &clock{t: time.Now()}, level: slog.LevelDebug, limit: waitLimit}
	w.http = httptest.NewServer(w.cloud.Handler())
	t.Cleanup(w.http.Close)
	w.ldap = ufdstest.Start(t, w.cloud)
	w.url, w.ldapURL = w.http.URL, w.ldap.URL
	return w
}

// start opens a store over b and runs the feeds and a pipeline writing to
// it until the test ends or stop.
func (w *world) start(s Settings, b store.Backend) {
	w.t.Helper()
	log := slog.New(slog.NewTextHandler(w.logs, &slog.HandlerOptions{Level: w.level}))
	st, err := store.Open(context.Background(), b, store.Options{}, log)
	if err != nil {
		w.t.Fatal(err)
	}
	w.store = st
	ufds := feed.NewUFDS(schema.UFDSConfig{Endpoint: schema.Endpoint{URL: w.ldapURL}, BindDN: ufdstest.RootDN,
		BindPassword: ufdstest.Password, CacheTime: time.Hour}, log)
	ufds.SetPollInterval(20 * time.Millisecond)
	w.ufds = ufds
	poll := w.poll
	if poll == 0 {
		poll = 20 * time.Millisecond
	}
	cnapi := feed.NewCNAPI(feed.CNAPIOptions{URL: w.url, PollInterval: poll,
		Down: s.Decide, Now: w.clock.Now, Logger: log})
	napi := feed.NewNAPI(feed.NAPIOptions{URL: w.url, Logger: log})
	vmapi := feed.NewVMAPI(feed.VMAPIConfig{URL: w.url, Instance: "5e1f0c36-0000-4000-8000-000000000001",
		MinBackoff: 10 * time.Millisecond, MaxBackoff: 100 * time.Millisecond}, log)
	s.CoalesceWindow, s.CoalesceMaxDelay = time.Millisecond, 10*time.Millisecond
	cfg := Config{Store: w.store, Owners: ufds, Servers: cnapi, Networks: napi, Settings: s,
		RetryInterval: 20 * time.Millisecond, Clock: w.clock.Now, Logger: log}
	if w.verify {
		cfg.Verify = vmapi.Verify
	}
	w.p = New(cfg)
	ctx, cancel := context.WithCancel(context.Background())
	g, ctx := errgroup.WithContext(ctx)
	g.Go(func() error { return w.p.Run(ctx) })
	g.Go(func() error { return vmapi.Run(ctx, w.p) })
	g.Go(func() error { return cnapi.Run(ctx, w.p.ServersChanged) })
	g.Go(func() error { return ufds.Watch(ctx, w.p.AccountChanged) })
	w.cancel, w.done = cancel, make(chan error, 1)
	go func() { w.done <- g.Wait() }()
	w.t.Cleanup(w.stop)
}

func (w *world) stop() {
	if w.cancel == nil {
		return
	}
	w.cancel()
	if err := <-w.done; err != nil && !errors.Is(err, context.Canceled) {
		w.t.Errorf("run: %v", err)
	}
	w.cancel = nil
	w.ufds.Close()
}

// step runs f as a subtest whose waits fail the subtest, not the parent.
func (w *world) step(t *testing.T, name string, f func(t *testing.T)) {
	t.Run(name, func(t *testing.T) {
		parent := w.t
		w.t = t
		defer func() { w.t = parent }()
		f(t)
	})
}

// records returns every VM and compute-node record the store serves, by zone, as
// "name TYPE data" lines sorted.
func (w *world) records() map[string][]string {
	out := map[string][]string{}
	for _, zone := range w.store.Zones() {
		snap := w.store.Snapshot(zone)
		if snap == nil {
			continue // dropped since Zones
		}
		for r := range snap.All() {
			if _, cn := zonegen.ComputeNodeOf(r.Source); isUUID(r.Source) || cn {
				out[zone] = append(out[zone], r.String())
			}
		}
		slices.Sort(out[zone])
		out[zone] = slices.Compact(out[zone])
	}
	return out
}

// waitFor polls ok until it holds, failing the test after waitLimit with
// what.
func (w *world) waitFor(what string, ok func() bool) {
	w.t.Helper()
	deadline := time.Now().Add(w.limit)
	for !ok() {
		if time.Now().After(deadline) {
			w.t.Fatalf("timed out waiting for %s; records:\n%s\nlog tail:\n%s", what, dump(w.records()), tail(w.logs.String(), 40))
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// settle waits until the pipeline has applied and committed everything
// queued.
func (w *world) settle() {
	w.t.Helper()
	w.waitFor("the pipeline to be idle", w.p.Idle)
}

func dump(m map[string][]string) string {
	var b strings.Builder
	for _, zone := range slices.Sorted(maps.Keys(m)) {
		for _, l := range m[zone] {
			b.WriteString(l + "\n")
		}
	}
	return b.String()
}

func tail(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	return strings.Join(lines[max(len(lines)-n, 0):], "\n")
}

// toView builds zonegen types from the cloud's own JSON shapes, the way
// an oracle independent of the feed clients reads them.
func toVM(t testing.TB, v mockcloud.VM) zonegen.VM {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	var out zonegen.VM
	if err := json.Unmarshal(b, &out); err != nil {
		t.Fatal(err)
	}
	return out
}
