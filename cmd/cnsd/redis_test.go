package main

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/miekg/dns"

	"github.com/cnsd/cnsd/logtest"
	"github.com/cnsd/cnsd/store/redistest"
)

// cnsdProcess is one cnsd run in the test, with its own DNS port.
type cnsdProcess struct {
	dns              string
	config, url      string
	dnsPort, apiPort int
	storeExtra       string // more keys of "store", after a comma
	log              *logtest.Buffer
	stop             func()
}

func startOnRedis(t *testing.T, url, zones string) *cnsdProcess {
	t.Helper()
	return startOnRedisWith(t, url, zones, "")
}

// startOnRedisWith starts cnsd with storeExtra (such as
// `"redis_accept_no_aof": true`) added to its store settings.
func startOnRedisWith(t *testing.T, url, zones, storeExtra string) *cnsdProcess {
	t.Helper()
	dir := t.TempDir()
	ports := freePorts(t, 2)
	dnsPort, apiPort := ports[0], ports[1]
	p := &cnsdProcess{dns: fmt.Sprintf("127.0.0.1:%d", dnsPort), config: filepath.Join(dir, "cnsd.json"),
		url: url, dnsPort: dnsPort, apiPort: apiPort, storeExtra: storeExtra}
	p.writeConfig(t, zones)
	ctx, cancel := context.WithCancel(context.Background())
	var stderr logtest.Buffer
	p.log = &stderr
	done := make(chan error, 1)
	go func() { done <- run(ctx, []string{"-config", p.config}, &bytes.Buffer{}, &stderr) }()
	stopped := false
	p.stop = func() {
		if stopped {
			return
		}
		stopped = true
		cancel()
		if err := <-done; err != nil {
			t.Errorf("cnsd: %v\n%s", err, stderr.String())
		}
	}
	t.Cleanup(p.stop)
	// Registered after stop, so run before it: a failed test shows what
	// cnsd logged up to the failure (a wait that timed out says no more).
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("cnsd's log:\n%s", stderr.String())
		}
	})
	return p
}

// writeConfig writes p's configuration with zones (forward_zones' body).
func (p *cnsdProcess) writeConfig(t *testing.T, zones string) {
	extra := ""
	if p.storeExtra != "" {
		extra = ", " + p.storeExtra
	}
	doc := fmt.Sprintf(`{"my_name": "ns1.example.test", "hostmaster": "hostmaster@example.test", "allow_transfer": ["127.0.0.1"],
	  "forward_zones": {%s}, "store": {"redis": %q%s},
	  "dns": {"listen": ["127.0.0.1:%d"]}, "api": {"listen": "127.0.0.1:%d", "token": "cnsd-test-token"}}`, zones, p.url, extra, p.dnsPort, p.apiPort)
	if err := os.WriteFile(p.config, []byte(doc), 0o644); err != nil {
		t.Fatal(err)
	}
}

func serialOf(addr, zone string) uint32 {
	r := ask(addr, zone, dns.TypeSOA)
	if r == nil || r.Rcode != dns.RcodeSuccess || len(r.Answer) != 1 {
		return 0
	}
	return r.Answer[0].(*dns.SOA).Serial
}

// axfrCount transfers zone and returns its records, or -1.
func axfrCount(addr, zone string) int {
	m := new(dns.Msg)
	m.SetAxfr(zone)
	return transferCount(&dns.Transfer{}, m, addr)
}

// transferCount runs the transfer m asks for and returns its records, or
// -1.
func transferCount(tr *dns.Transfer, m *dns.Msg, addr string) int {
	ch, err := tr.In(m, addr)
	if err != nil {
		return -1
	}
	n := 0
	for env := range ch {
		if env.Error != nil {
			return -1
		}
		n += len(env.RR)
	}
	return n
}

// TestTwoProcessesOnRedis: two cnsd on one redis-server serve the same
// serials, the one that does not hold the lease by following the other's
// commits; when the writer stops, the other takes the lease over and
// writes (here: a zone added to its configuration appears).
func TestTwoProcessesOnRedis(t *testing.T) {
	srv := redistest.Start(t)
	const zone = "a.example.test."
	a := startOnRedis(t, srv.URL(), `"a.example.test": {"networks": ["*"]}`)
	waitFor(t, "the writer's SOA", func() bool { return serialOf(a.dns, zone) != 0 })
	b := startOnRedis(t, srv.URL(), `"a.example.test": {"networks": ["*"]}`)
	waitFor(t, "the follower to serve the writer's serial", func() bool {
		s := serialOf(a.dns, zone)
		return s != 0 && serialOf(b.dns, zone) == s
	})
	if na, nb := axfrCount(a.dns, zone), axfrCount(b.dns, zone); na <= 0 || na != nb {
		t.Fatalf("AXFR: %d records from the writer, %d from the follower", na, nb)
	}

	// Both learn of zone c; only the writer creates it, the follower
	// serves it from the writer's commits.
	withC := `"a.example.test": {"networks": ["*"]}, "c.example.test": {"networks": ["a1b2c3d4-0000-4000-8000-000000000002"]}`
	a.writeConfig(t, withC)
	b.writeConfig(t, withC)
	if err := syscall.Kill(os.Getpid(), syscall.SIGHUP); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the follower to serve the zone the writer created", func() bool {
		s := serialOf(a.dns, "c.example.test.")
		return s != 0 && serialOf(b.dns, "c.example.test.") == s
	})

	a.stop()
	b.writeConfig(t, withC+`, "b.example.test": {"networks": ["a1b2c3d4-0000-4000-8000-000000000001"]}`)
	if err := syscall.Kill(os.Getpid(), syscall.SIGHUP); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the new writer to create b.example.test", func() bool { return serialOf(b.dns, "b.example.test.") != 0 })
}
