package faults

import (
	"context"
	"fmt"
	"net"
	"net/http/httptest"
	"net/netip"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cnsd/cnsd/mockcloud"
	"github.com/cnsd/cnsd/mockcloud/ufdstest"
	"github.com/cnsd/cnsd/store/redistest"
	"github.com/cnsd/cnsd/xfr/secondarytest"
)

// cnsdBin is the cnsd binary TestMain builds for every scenario.
var cnsdBin string

// The scenarios that passed and failed, for the closing line.
var passed, failed atomic.Int64

// full is the long form (`make faults`): every fault as often as the
// suite's table says; otherwise a short form that CI runs.
var full = os.Getenv("FAULTS") == "full"

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "cnsd-faults")
	if err != nil {
		fmt.Fprintln(os.Stderr, "faults:", err)
		os.Exit(2)
	}
	cnsdBin = filepath.Join(dir, "cnsd")
	if out, err := exec.Command("go", "build", "-o", cnsdBin, "github.com/cnsd/cnsd/cmd/cnsd").CombinedOutput(); err != nil {
		fmt.Fprintf(os.Stderr, "faults: go build cnsd: %v\n%s", err, out)
		os.Exit(2)
	}
	code := m.Run()
	fmt.Printf("faults: %d passed, %d failed\n", passed.Load(), failed.Load())
	os.RemoveAll(dir)
	os.Exit(code)
}

// The names the suite's cnsd serves.
const (
	forwardZone = "faults.example.test."
	catalogZone = "catalog.faults.example.test."
	apiToken    = "faults-token"
)

// env is one scenario's world: the cloud under churn, its UFDS, Redis or
// the embedded store, a BIND secondary of the first cnsd, a Knot
// secondary of all of them (the second first) when there are several,
// and the cnsd processes.
type env struct {
	t        *testing.T
	cloud    *mockcloud.Cloud
	cloudURL string
	flaky    *flakyCloud // the cloud's API as cnsd reaches it
	ldap     *ufdstest.Server
	redis    *redistest.Server // nil with the embedded store or Sentinel
	sentinel *redistest.SentinelSet
	storeDir string // the embedded store's directory
	// acceptNoAOF: the nodes are told to write to a Redis without an
	// append-only file.
	acceptNoAOF bool
	bind        *secondarytest.Secondary
	knot        *secondarytest.Secondary // nil with one node
	nodes       []*node
	watch       *serialWatch

	churnStop context.CancelFunc
	churnDone chan struct{}
}

type envOptions struct {
	redis       bool               // the nodes share a redis-server; else each has the embedded store
	redisOpts   []redistest.Option // how that redis-server runs
	acceptNoAOF bool               // the nodes write to a Redis without an append-only file
	sentinel    bool               // the nodes share a master, a replica and three Sentinels
	nodes       int                // cnsd processes (1 unless several share Redis)
	storeDir    string             // the embedded store's directory; a temporary one if empty
}

// scenario runs f as a subtest counted in the closing line.
func scenario(t *testing.T, name string, f func(t *testing.T)) {
	t.Run(name, func(t *testing.T) {
		t.Cleanup(func() {
			if t.Failed() {
				failed.Add(1)
			} else {
				passed.Add(1)
			}
		})
		f(t)
	})
}

// newEnv starts the cloud, UFDS, the store, BIND and the cnsd nodes, and
// waits until the first node serves the cloud and BIND has its zones.
func newEnv(t *testing.T, o envOptions) *env {
	t.Helper()
	e := &env{t: t, storeDir: o.storeDir, acceptNoAOF: o.acceptNoAOF}
	e.cloud = mockcloud.New(mockcloud.Generate(mockcloud.GenOptions{VMs: 60, Accounts: 5, Servers: 4, Seed: 7}), nil)
	e.flaky = &flakyCloud{next: e.cloud.Handler()}
	srv := httptest.NewServer(e.flaky)
	t.Cleanup(srv.Close)
	e.cloudURL = srv.URL
	e.ldap = ufdstest.Start(t, e.cloud)
	switch {
	case o.sentinel:
		e.sentinel = redistest.StartSentinel(t, 1)
	case o.redis:
		e.redis = redistest.Start(t, o.redisOpts...)
	}
	if e.storeDir == "" {
		e.storeDir = t.TempDir()
	}
	n := max(o.nodes, 1)
	for i := range n {
		e.nodes = append(e.nodes, e.newNode(fmt.Sprintf("cnsd%d", i), e.storeJSON(i), true))
	}
	e.startSecondaries()
	for _, nd := range e.nodes {
		nd.writeConfig(e.secondaryAddrs()...)
		nd.start()
	}
	e.waitServing(e.nodes[0])
	e.watch = e.watchSerials()
	return e
}

// startSecondaries starts the BIND secondary of the first node and, with
// several nodes, a Knot secondary of all of them that asks the second
// first (as an operator lists every cnsd as a primary): it takes the
// commits a follower serves. The nodes' ports were picked free but are
// not bound until the nodes start, so a secondary may be handed one of
// them: then the nodes get new ports and the secondaries start again.
func (e *env) startSecondaries() {
	for range 5 {
		var primaries []netip.AddrPort
		for _, nd := range e.nodes {
			p, err := netip.ParseAddrPort(nd.dns)
			if err != nil {
				e.t.Fatal(err)
			}
			primaries = append(primaries, p)
		}
		e.bind = secondarytest.StartBIND(e.t, secondarytest.Config{Primary: primaries[0], Catalog: catalogZone, AllowTransfer: true})
		started := []*secondarytest.Secondary{e.bind}
		if len(primaries) > 1 {
			more := append([]netip.AddrPort{primaries[0]}, primaries[2:]...)
			e.knot = secondarytest.StartKnot(e.t, secondarytest.Config{Primary: primaries[1], MorePrimaries: more,
				Catalog: catalogZone, AllowTransfer: true})
			started = append(started, e.knot)
		}
		taken := ""
		for _, sec := range started {
			port := strconv.Itoa(int(sec.Addr().Port()))
			for _, nd := range e.nodes {
				if strings.HasSuffix(nd.dns, ":"+port) || strings.HasSuffix(nd.api, ":"+port) {
					taken = port
				}
			}
		}
		if taken == "" {
			return
		}
		e.t.Logf("a secondary was given port %s, picked for a cnsd; picking the cnsd ports again", taken)
		for _, sec := range started {
			sec.Stop()
		}
		for _, nd := range e.nodes {
			nd.dns = fmt.Sprintf("127.0.0.1:%d", freePort(e.t))
			nd.api = fmt.Sprintf("http://127.0.0.1:%d", freePort(e.t))
		}
	}
	e.t.Fatal("the secondaries kept being given the cnsd's ports")
}

// secondaries are the secondaries running, by name.
func (e *env) secondaries() map[string]*secondarytest.Secondary {
	s := map[string]*secondarytest.Secondary{"BIND": e.bind}
	if e.knot != nil {
		s["Knot"] = e.knot
	}
	return s
}

// secondaryAddrs are the secondaries' addresses, the nodes' peers.
func (e *env) secondaryAddrs() []string {
	var addrs []string
	for _, sec := range e.secondaries() {
		addrs = append(addrs, sec.Addr().String())
	}
	slices.Sort(addrs)
	return addrs
}

// storeJSON is node i's store configuration.
func (e *env) storeJSON(i int) string {
	switch {
	case e.sentinel != nil:
		return fmt.Sprintf(`{"redis": %q}`, e.sentinel.URL())
	case e.redis != nil && e.acceptNoAOF:
		return fmt.Sprintf(`{"redis": %q, "redis_accept_no_aof": true}`, e.redis.URL())
	case e.redis != nil:
		return fmt.Sprintf(`{"redis": %q}`, e.redis.URL())
	}
	return fmt.Sprintf(`{"path": %q}`, filepath.Join(e.storeDir, fmt.Sprintf("cnsd%d.db", i)))
}

// waitServing waits until nd answers the forward zone's SOA and the
// secondaries have loaded it from the catalog.
func (e *env) waitServing(nd *node) {
	e.t.Helper()
	e.waitFor(90*time.Second, nd.name+" and the secondaries to serve "+forwardZone, func() string {
		s, ok := soaSerial(nd.dns, forwardZone)
		if !ok {
			return nd.name + " does not answer"
		}
		for name, sec := range e.secondaries() {
			if b, ok := soaSerial(sec.Addr().String(), forwardZone); !ok || b != s {
				return fmt.Sprintf("%s has serial %d (answers %v), %s %d", name, b, ok, nd.name, s)
			}
		}
		return ""
	})
}

// churn changes the cloud at rate changes per second until stopChurn,
// keeping UFDS in step with the cloud's accounts.
func (e *env) churn(rate float64) {
	ctx, cancel := context.WithCancel(context.Background())
	e.churnStop, e.churnDone = cancel, make(chan struct{})
	go func() {
		defer close(e.churnDone)
		var wg sync.WaitGroup
		wg.Go(func() { _ = e.cloud.Churn(ctx, rate, 11) })
		wg.Go(func() {
			tick := time.NewTicker(200 * time.Millisecond)
			defer tick.Stop()
			for {
				select {
				case <-ctx.Done():
					return
				case <-tick.C:
					_ = e.ldap.Sync(e.cloud)
				}
			}
		})
		wg.Wait()
	}()
	e.t.Cleanup(e.stopChurn)
}

// stopChurn ends the churn and brings UFDS up to date.
func (e *env) stopChurn() {
	if e.churnStop == nil {
		return
	}
	e.churnStop()
	<-e.churnDone
	e.churnStop = nil
	if err := e.ldap.Sync(e.cloud); err != nil {
		e.t.Errorf("ufds sync: %v", err)
	}
}

// waitFor polls cond until it returns "" and fails the test with its last
// answer after limit.
func (e *env) waitFor(limit time.Duration, what string, cond func() string) {
	e.t.Helper()
	deadline := time.Now().Add(limit)
	for {
		why := cond()
		if why == "" {
			return
		}
		if time.Now().After(deadline) {
			e.t.Fatalf("timed out after %v waiting for %s: %s", limit, what, why)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// freePort returns a loopback TCP and UDP port nothing listens on now.
func freePort(t testing.TB) int {
	t.Helper()
	for range 20 {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		port := l.Addr().(*net.TCPAddr).Port
		l.Close()
		if u, err := net.ListenPacket("udp", "127.0.0.1:"+strconv.Itoa(port)); err == nil {
			u.Close()
			return port
		}
	}
	t.Fatal("no free port")
	return 0
}
