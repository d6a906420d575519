package main

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/miekg/dns"

	"github.com/cnsd/cnsd/logtest"
	"github.com/cnsd/cnsd/mockcloud"
	"github.com/cnsd/cnsd/mockcloud/ufdstest"
	"github.com/cnsd/cnsd/schema"
)

// slowAXFR starts a transfer of zone from addr over a connection with a
// small receive buffer, reads its first message and returns the
// connection, so that the rest of the transfer waits for the reader while
// the test changes things.
func slowAXFR(t *testing.T, addr, zone string) (*dns.Conn, *dns.Msg) {
	t.Helper()
	d := net.Dialer{Control: func(_, _ string, c syscall.RawConn) error {
		var serr error
		err := c.Control(func(fd uintptr) { serr = syscall.SetsockoptInt(int(fd), syscall.SOL_SOCKET, syscall.SO_RCVBUF, 4096) })
		if err != nil {
			return err
		}
		return serr
	}}
	nc, err := d.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	conn := &dns.Conn{Conn: nc}
	t.Cleanup(func() { conn.Close() })
	if err := conn.WriteMsg(new(dns.Msg).SetAxfr(zone)); err != nil {
		t.Fatal(err)
	}
	first, err := conn.ReadMsg()
	if err != nil {
		t.Fatal(err)
	}
	return conn, first
}

// finishAXFR reads the rest of a transfer and returns its records and
// the octets of its messages.
func finishAXFR(t *testing.T, conn *dns.Conn, first *dns.Msg) ([]dns.RR, int) {
	t.Helper()
	rrs, size := append([]dns.RR(nil), first.Answer...), first.Len()
	_ = conn.SetReadDeadline(time.Now().Add(30 * time.Second))
	for len(rrs) < 2 || rrs[len(rrs)-1].Header().Rrtype != dns.TypeSOA {
		m, err := conn.ReadMsg()
		if err != nil {
			t.Fatalf("transfer broken after %d records: %v", len(rrs), err)
		}
		rrs, size = append(rrs, m.Answer...), size+m.Len()
	}
	return rrs, size
}

// TestReloadDuringTransfer changes the configuration file four times while
// a transfer of a zone of thousands of records is held half-read and
// queries are asked all along: a zone is added, a zone is remapped, a
// secondary is added, an invalid file is refused. The transfer completes
// from its snapshot and no query goes unanswered.
func TestReloadDuringTransfer(t *testing.T) {
	f := mockcloud.Generate(mockcloud.GenOptions{VMs: 1500, Accounts: 10, Servers: 3, Seed: 9})
	cloud := mockcloud.New(f, nil)
	cloudAPI := httptest.NewServer(cloud.Handler())
	t.Cleanup(cloudAPI.Close)
	ldap := ufdstest.Start(t, cloud)
	dir := t.TempDir()
	ports := freePorts(t, 2)
	cfgPath := filepath.Join(dir, "cnsd.json")
	public := f.NetworkPools[0].UUID
	// extra is more top-level members, each with a trailing comma. The
	// test asks faster than rate limiting lets one client be answered.
	write := func(zones string, extra ...string) {
		cfg := fmt.Sprintf(`{"my_name": "ns1.example.test", "hostmaster": "hostmaster@example.test", "allow_transfer": ["127.0.0.1"],
  "rrl": {"exempt": ["127.0.0.1"]}, `+strings.Join(extra, "")+`
  "forward_zones": {%s}, "store": {"path": %q}, "dns": {"listen": ["127.0.0.1:%d"]}, "api": {"listen": "127.0.0.1:%d", "token": "cnsd-test-token"},
  "vmapi_opts": {"url": %q}, "cnapi_opts": {"url": %q}, "napi_opts": {"url": %q},
  "ufds_opts": {"url": %q, "bindDN": %q, "bindPassword": %q}}`, zones, filepath.Join(dir, "cnsd.db"), ports[0], ports[1],
			cloudAPI.URL, cloudAPI.URL, cloudAPI.URL, ldap.URL, ufdstest.RootDN, ufdstest.Password)
		if err := os.WriteFile(cfgPath+".new", []byte(cfg), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.Rename(cfgPath+".new", cfgPath); err != nil {
			t.Fatal(err)
		}
	}
	const big = "all.example.test."
	write(`"all.example.test": {"networks": ["*"]}`)
	stderr := runDaemon(t, cfgPath)
	addr := fmt.Sprintf("127.0.0.1:%d", ports[0])
	waitFor(t, "the cloud's records", func() bool { return axfrCount(addr, big) > 5000 })
	waitFor(t, "the bootstrap to settle", func() bool {
		s := serialOf(addr, big)
		time.Sleep(300 * time.Millisecond)
		return s != 0 && serialOf(addr, big) == s
	})
	serial := serialOf(addr, big)
	conn, first := slowAXFR(t, addr, big)

	var asked, unanswered atomic.Int64
	stopAsking := make(chan struct{})
	asking := make(chan struct{})
	go func() {
		defer close(asking)
		for {
			select {
			case <-stopAsking:
				return
			case <-time.After(20 * time.Millisecond):
			}
			asked.Add(1)
			if serialOf(addr, big) == 0 {
				unanswered.Add(1)
			}
		}
	}()

	const keyName, secret = "xfr-key", "c2VjcmV0IG9mIHRoZSByZWxvYWQgdGVzdA=="
	steps := []struct {
		what, zones string
		extra       []string
		done        func() bool
	}{
		{"zone added", `"all.example.test": {"networks": ["*"]}, "pub.example.test": {"networks": ["` + public + `"]}`,
			nil, func() bool { return axfrCount(addr, "pub.example.test.") > 2 }},
		{"zone remapped", `"all.example.test": {"networks": ["*"]}, "pub.example.test": {"networks": ["` + f.NetworkPools[1].UUID + `"]}`,
			nil, func() bool { return serialOf(addr, big) != serial && axfrCount(addr, "pub.example.test.") > 2 }},
		{"secondary added", `"all.example.test": {"networks": ["*"], "peers": ["ns2.example.test"]}, "pub.example.test": {"networks": ["` + f.NetworkPools[1].UUID + `"]}`,
			nil, func() bool { r := ask(addr, big, dns.TypeNS); return r != nil && len(r.Answer) == 2 }},
		{"TSIG key added and required", `"all.example.test": {"networks": ["*"], "peers": ["ns2.example.test"]}, "pub.example.test": {"networks": ["` +
			f.NetworkPools[1].UUID + `"], "tsig_key": "` + keyName + `", "require_tsig": true}`,
			[]string{`"tsig_keys": {"` + keyName + `": {"algorithm": "hmac-sha256", "secret": "` + secret + `"}},`},
			func() bool {
				return axfrCount(addr, "pub.example.test.") == -1 && signedAXFRCount(addr, "pub.example.test.", keyName, secret) > 2
			}},
	}
	for _, s := range steps {
		before := serialOf(addr, big)
		write(s.zones, s.extra...)
		waitFor(t, s.what, s.done)
		// The NS set is zone content: a new secondary is a new serial.
		if s.what == "secondary added" && serialOf(addr, big) == before {
			t.Errorf("%s: the NS records changed but the serial stayed %d", s.what, before)
		}
	}
	write(`{"my_name": 1}`)
	waitFor(t, "the invalid file to be refused", func() bool {
		return strings.Contains(stderr.String(), "configuration not reloaded")
	})
	rrs, _ := finishAXFR(t, conn, first)
	close(stopAsking)
	<-asking
	for _, rr := range []dns.RR{rrs[0], rrs[len(rrs)-1]} {
		if soa, ok := rr.(*dns.SOA); !ok || soa.Serial != serial {
			t.Errorf("the held transfer starts or ends with %v, want the SOA of serial %d", rr, serial)
		}
	}
	if len(rrs) <= 5000 {
		t.Errorf("the held transfer has %d records, want the whole zone of more than 5000", len(rrs))
	}
	if asked.Load() == 0 || unanswered.Load() != 0 {
		t.Errorf("%d of %d queries unanswered during the reloads", unanswered.Load(), asked.Load())
	}
	r := ask(addr, big, dns.TypeNS)
	if r == nil || len(r.Answer) != 2 {
		t.Errorf("after the refused file the running configuration (two NS) is gone: %v", r)
	}
}

// TestShutdownFinishesTransfer stops cnsd while a transfer of thousands
// of records is held half-read: cnsd waits for it, and the secondary gets
// the whole zone.
func TestShutdownFinishesTransfer(t *testing.T) {
	// Big enough that the transfer cannot sit whole in the kernel's
	// socket buffers (4 MiB at most for the sender here): the end of it
	// is sent only after the shutdown began.
	f := mockcloud.Generate(mockcloud.GenOptions{VMs: 16000, Accounts: 20, Servers: 4, Seed: 9})
	cloud := mockcloud.New(f, nil)
	cloudAPI := httptest.NewServer(cloud.Handler())
	t.Cleanup(cloudAPI.Close)
	ldap := ufdstest.Start(t, cloud)
	dir := t.TempDir()
	ports := freePorts(t, 2)
	cfgPath := filepath.Join(dir, "cnsd.json")
	cfg := fmt.Sprintf(`{"my_name": "ns1.example.test", "hostmaster": "hostmaster@example.test", "allow_transfer": ["127.0.0.1"],
  "forward_zones": {"all.example.test": {"networks": ["*"]}}, "store": {"path": %q},
  "dns": {"listen": ["127.0.0.1:%d"]}, "api": {"listen": "127.0.0.1:%d", "token": "cnsd-test-token"},
  "vmapi_opts": {"url": %q}, "cnapi_opts": {"url": %q}, "napi_opts": {"url": %q},
  "ufds_opts": {"url": %q, "bindDN": %q, "bindPassword": %q}}`, filepath.Join(dir, "cnsd.db"), ports[0], ports[1],
		cloudAPI.URL, cloudAPI.URL, cloudAPI.URL, ldap.URL, ufdstest.RootDN, ufdstest.Password)
	if err := os.WriteFile(cfgPath, []byte(cfg), 0o644); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	var stderr logtest.Buffer
	done := make(chan error, 1)
	go func() { done <- run(ctx, []string{"-config", cfgPath}, &bytes.Buffer{}, &stderr) }()
	defer cancel()
	addr := fmt.Sprintf("127.0.0.1:%d", ports[0])
	const zone = "all.example.test."
	waitForWithin(t, 2*time.Minute, "the cloud's records", func() bool { return axfrCount(addr, zone) > 60000 })
	conn, first := slowAXFR(t, addr, zone)
	cancel()
	time.Sleep(200 * time.Millisecond) // cnsd is shutting down, the transfer waits
	rrs, size := finishAXFR(t, conn, first)
	if len(rrs) <= 60000 || size <= 6<<20 {
		t.Errorf("the transfer held over the shutdown has %d records in %d octets, want the whole zone of more than 6 MiB", len(rrs), size)
	}
	if err := <-done; err != nil {
		t.Errorf("cnsd: %v\n%s", err, stderr.String())
	}
}

// signedAXFRCount transfers zone with a request signed by the HMAC-SHA256
// key name and returns its records, or -1.
func signedAXFRCount(addr, zone, name, secret string) int {
	key := dns.Fqdn(name)
	m := new(dns.Msg)
	m.SetAxfr(zone)
	m.SetTsig(key, dns.HmacSHA256, 300, time.Now().Unix())
	return transferCount(&dns.Transfer{TsigSecret: map[string]string{key: secret}}, m, addr)
}

// TestReloadTokenAndStartOnlySettings: a new bearer token set in the file
// replaces the old one from the reload on; a changed listen address is
// named in the log as needing a restart, and the running one keeps
// serving.
func TestReloadTokenAndStartOnlySettings(t *testing.T) {
	c := startOverCloud(t, `"cloud.example.test": {"networks": ["*"]}`)
	status := func(token string) int {
		req, _ := http.NewRequest("GET", c.api+"/zones", nil)
		if token != "" {
			req.Header.Set("Authorization", "Bearer "+token)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			return 0
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	waitFor(t, "the API", func() bool { return status(testToken) == http.StatusOK })
	if got := status(""); got != http.StatusUnauthorized {
		t.Errorf("GET /zones without a token: %d, want 401", got)
	}
	c.token, c.dnsListen = "s3cret", "127.0.0.1:1"
	c.writeConfig(`"cloud.example.test": {"networks": ["*"]}`)
	waitFor(t, "the old token to be refused", func() bool { return status(testToken) == http.StatusUnauthorized })
	if got := status("s3cret"); got != http.StatusOK {
		t.Errorf("GET /zones with the new token: %d", got)
	}
	waitFor(t, "the log line naming dns.listen", func() bool {
		return strings.Contains(c.stderr.String(), "restart cnsd to apply it") && strings.Contains(c.stderr.String(), "key=dns.listen")
	})
	if strings.Contains(c.stderr.String(), "key=api.listen") {
		t.Error("an unchanged api.listen is reported as changed")
	}
	if !soa(c.dns, "cloud.example.test.") {
		t.Error("the running DNS listener stopped answering")
	}
}

func TestStartOnlyChanges(t *testing.T) {
	base := func() *schema.Config {
		cfg, err := schema.Parse([]byte(`{"my_name": "ns1.example.test", "hostmaster": "hostmaster@example.test",
  "forward_zones": {"a.example.test": {"networks": ["*"]}}}`))
		if err != nil {
			t.Fatal(err)
		}
		return cfg
	}
	tests := []struct {
		name   string
		change func(*schema.Config)
		want   []string
	}{
		{"nothing", func(*schema.Config) {}, nil},
		{"zones and TTLs are reloaded", func(c *schema.Config) { c.TTL.Record = time.Minute; c.UseAlias = true }, nil},
		{"token is reloaded", func(c *schema.Config) { c.API.Token = "t" }, nil},
		{"listen addresses", func(c *schema.Config) {
			c.DNS.Listen = []string{"127.0.0.1:5353"}
			c.API.Listen = []string{"127.0.0.1:9"}
		}, []string{"dns.listen", "api.listen"}},
		{"store", func(c *schema.Config) { c.Store.Redis = "redis://127.0.0.1:6379" }, []string{"store"}},
		{"cnapi", func(c *schema.Config) { c.CNAPI.PollInterval = time.Second }, []string{"cnapi_opts"}},
		{"store options", func(c *schema.Config) { c.RRsetWarn, c.MaxSvcMembers = 500, 64 },
			[]string{"rrset_warn_records", "max_service_members"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			next := base()
			tc.change(next)
			if got := startOnlyChanges(base(), next); !slices.Equal(got, tc.want) {
				t.Errorf("startOnlyChanges = %v, want %v", got, tc.want)
			}
		})
	}
}
