package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/miekg/dns"

	"github.com/cnsd/cnsd/logtest"
	"github.com/cnsd/cnsd/xfr/secondarytest"
)

// freePorts returns n distinct ports of 127.0.0.1, each free for both UDP
// and TCP when asked (all are held until the last is chosen, so none is
// handed out twice); another process may take one before cnsd binds it,
// which only makes a test fail, never pass wrongly.
func freePorts(t testing.TB, n int) []int {
	t.Helper()
	var ports []int
	for range n {
		pc, l := secondarytest.ListenPair(t)
		defer pc.Close()
		defer l.Close()
		ports = append(ports, pc.LocalAddr().(*net.UDPAddr).Port)
	}
	return ports
}

const daemonConfig = `{"my_name": "ns1.example.test", "hostmaster": "hostmaster@example.test",
  "forward_zones": {%s},
  "store": {"path": %q}, "dns": {"listen": ["127.0.0.1:%d"]}, "api": {"listen": "127.0.0.1:%d", "token": "cnsd-test-token"}}`

// runDaemon runs cnsd with the configuration at cfgPath until the test
// ends, and returns its log; the log is shown when the test fails.
func runDaemon(t *testing.T, cfgPath string) *logtest.Buffer {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	stderr := &logtest.Buffer{}
	done := make(chan error, 1)
	go func() { done <- run(ctx, []string{"-config", cfgPath}, &bytes.Buffer{}, stderr) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("cnsd: %v\n%s", err, stderr.String())
		}
		if t.Failed() {
			t.Logf("cnsd's log:\n%s", stderr.String())
		}
	})
	return stderr
}

// TestDaemon runs cnsd on the embedded store: a configured zone is served
// (SOA and NS) before any record is in it, the API lists it, a SIGHUP
// with a new zone adds it and one with an invalid file is refused.
func TestDaemon(t *testing.T) {
	dir := t.TempDir()
	cfgPath := filepath.Join(dir, "cnsd.json")
	ports := freePorts(t, 2)
	dnsPort, apiPort := ports[0], ports[1]
	write := func(zones string) {
		doc := fmt.Sprintf(daemonConfig, zones, filepath.Join(dir, "cnsd.db"), dnsPort, apiPort)
		if err := os.WriteFile(cfgPath, []byte(doc), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write(`"a.example.test": {"networks": ["*"]}`)
	stderr := runDaemon(t, cfgPath)
	dnsAddr := fmt.Sprintf("127.0.0.1:%d", dnsPort)
	waitFor(t, "the SOA of a.example.test", func() bool { return soa(dnsAddr, "a.example.test.") })
	if ns := ask(dnsAddr, "a.example.test.", dns.TypeNS); ns == nil || len(ns.Answer) != 1 {
		t.Fatalf("NS answer %v", ns)
	}
	waitFor(t, "GET /zones to list the zone and the catalog zone", func() bool {
		var zones []struct{ Name string }
		getJSON(t, fmt.Sprintf("http://127.0.0.1:%d/zones", apiPort), &zones)
		return len(zones) == 2 && zones[0].Name == "a.example.test" && zones[1].Name == "catalog.cnsd.invalid"
	})

	write(`"a.example.test": {"networks": ["*"]}, "b.example.test": {"networks": ["a1b2c3d4-0000-4000-8000-000000000001"]}`)
	if err := syscall.Kill(os.Getpid(), syscall.SIGHUP); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the new zone b.example.test", func() bool { return soa(dnsAddr, "b.example.test.") })

	if err := os.WriteFile(cfgPath, []byte(`{"my_name": 1}`), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Kill(os.Getpid(), syscall.SIGHUP); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the refusal of the invalid file in the log", func() bool {
		return bytes.Contains([]byte(stderr.String()), []byte("configuration not reloaded"))
	})
	if !soa(dnsAddr, "b.example.test.") {
		t.Fatal("the running configuration was lost with an invalid file")
	}
}

func ask(addr, name string, qtype uint16) *dns.Msg {
	m := new(dns.Msg).SetQuestion(name, qtype)
	r, _, err := (&dns.Client{Timeout: time.Second}).Exchange(m, addr)
	if err != nil {
		return nil
	}
	return r
}

func soa(addr, zone string) bool {
	r := ask(addr, zone, dns.TypeSOA)
	return r != nil && r.Rcode == dns.RcodeSuccess && len(r.Answer) == 1
}

func getJSON(t *testing.T, url string, v any) {
	t.Helper()
	resp, err := authed.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if err := json.NewDecoder(resp.Body).Decode(v); err != nil {
		t.Fatal(err)
	}
}

func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	waitForWithin(t, 20*time.Second, what, cond)
}

// waitForWithin is waitFor with its own limit, for a wait whose length
// grows with the machine's load (a bootstrap of thousands of VMs).
func waitForWithin(t *testing.T, limit time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(limit)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// testToken is the API token of the tests' configurations.
const testToken = "cnsd-test-token"

// authed is an HTTP client that presents testToken on requests that
// carry no Authorization header of their own.
var authed = &http.Client{Transport: bearer{testToken}}

type bearer struct{ token string }

func (b bearer) RoundTrip(r *http.Request) (*http.Response, error) {
	if r.Header.Get("Authorization") == "" {
		r = r.Clone(r.Context())
		r.Header.Set("Authorization", "Bearer "+b.token)
	}
	return http.DefaultTransport.RoundTrip(r)
}
