package main

import (
	"bytes"
	"context"
	"fmt"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/miekg/dns"

	"github.com/cnsd/cnsd/api"
	"github.com/cnsd/cnsd/logtest"
	"github.com/cnsd/cnsd/mockcloud"
	"github.com/cnsd/cnsd/mockcloud/ufdstest"
)

const (
	cloudOwner  = "a11ce000-0000-4000-8000-000000000001"
	cloudVM     = "00000001-0000-4000-8000-000000000001"
	cloudNet    = "e0000000-0000-4000-8000-00000000000e"
	cloudServer = "c0000001-0000-4000-8000-00000000000c"
)

func cloudFixture() *mockcloud.Fixture {
	now := time.Now().UTC()
	return &mockcloud.Fixture{
		Users: []mockcloud.User{{UUID: cloudOwner, Login: "alice", TritonCNSEnabled: "true", ApprovedForProvisioning: "true"}},
		Servers: []mockcloud.Server{{UUID: cloudServer, Hostname: "cn1", Status: "running",
			Setup: true, LastBoot: now.Add(-48 * time.Hour).Format(time.RFC3339), LastHeartbeat: now.Format(time.RFC3339)}},
		Networks: []mockcloud.Network{{UUID: cloudNet, Name: "external", Family: "ipv4", NICTag: "external", Subnet: "192.0.2.0/24"}},
		VMs: []mockcloud.VM{{UUID: cloudVM, Alias: "web1", OwnerUUID: cloudOwner, ServerUUID: cloudServer,
			State: "running", Brand: "joyent", Tags: map[string]any{"triton.cns.services": "web"},
			NICs: []mockcloud.NIC{{Interface: "net0", MAC: "90:b8:d0:00:00:11", NICTag: "external", IP: "192.0.2.11", NetworkUUID: cloudNet}}}},
	}
}

// TestDaemonFollowsCloud runs cnsd over the simulated cloud (its HTTP APIs
// and a real slapd as UFDS): a VM's names are answered over DNS, GET /vm
// explains them, a new service tag appears, a zone added to the file is
// filled, and a destroyed VM's names go.
func TestDaemonFollowsCloud(t *testing.T) {
	c := startOverCloud(t, `"cloud.example.test": {"networks": ["*"]}`)
	cloud, dnsAddr, apiURL, writeConfig := c.cloud, c.dns, c.api, c.writeConfig
	inst := cloudVM + ".inst." + cloudOwner + ".cloud.example.test."
	waitFor(t, inst+" A 192.0.2.11", func() bool { return answers(dnsAddr, inst, "192.0.2.11") })
	waitFor(t, "the web service", func() bool {
		return answers(dnsAddr, "web.svc."+cloudOwner+".cloud.example.test.", "192.0.2.11")
	})
	var vm api.VM
	getJSON(t, apiURL+"/vm/"+cloudVM, &vm)
	if !vm.Instance || len(vm.Services) != 1 || !vm.Services[0].Listed || !slices.Contains(vm.Names, strings.TrimSuffix(inst, ".")) {
		t.Errorf("GET /vm/%s = %+v, want the instance listed, in service web, with its names", cloudVM, vm)
	}
	if _, err := cloud.SetTags(cloudVM, map[string]any{"triton.cns.services": "web,api"}); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the new api service", func() bool {
		return answers(dnsAddr, "api.svc."+cloudOwner+".cloud.example.test.", "192.0.2.11")
	})
	// A zone added by editing the file, without SIGHUP: cnsd sees the
	// change, serves the zone and evaluates every VM for it.
	writeConfig(`"cloud.example.test": {"networks": ["*"]}, "ext.example.test": {"networks": ["` + cloudNet + `"]}`)
	waitFor(t, "the VM in the new zone ext.example.test", func() bool {
		return answers(dnsAddr, cloudVM+".inst."+cloudOwner+".ext.example.test.", "192.0.2.11")
	})
	if _, err := cloud.DestroyVM(cloudVM); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "NXDOMAIN for the destroyed VM", func() bool {
		r := ask(dnsAddr, inst, dns.TypeA)
		return r != nil && r.Rcode == dns.RcodeNameError
	})
}

// answers reports whether name has an A record with addr.
func answers(dnsAddr, name, addr string) bool {
	r := ask(dnsAddr, name, dns.TypeA)
	if r == nil {
		return false
	}
	for _, rr := range r.Answer {
		if a, ok := rr.(*dns.A); ok && a.A.String() == addr {
			return true
		}
	}
	return false
}

func TestCloudConfiguredNeedsEveryAPI(t *testing.T) {
	base := `{"my_name": "ns1.example.test", "hostmaster": "hostmaster@example.test",
  "forward_zones": {"a.example.test": {"networks": ["*"]}}, "vmapi_opts": {"url": "http://127.0.0.1:1"}, %s}`
	path := filepath.Join(t.TempDir(), "cnsd.json")
	doc := fmt.Sprintf(base, `"napi_opts": {"url": "http://127.0.0.1:1"}`)
	if err := os.WriteFile(path, []byte(doc), 0o644); err != nil {
		t.Fatal(err)
	}
	err := run(context.Background(), []string{"-config", path}, &bytes.Buffer{}, &bytes.Buffer{})
	if err == nil || !strings.Contains(err.Error(), "ufds_opts") || !strings.Contains(err.Error(), "cnapi_opts") {
		t.Fatalf("run with vmapi_opts but no ufds_opts or cnapi_opts: %v, want an error naming both", err)
	}
}

// overCloud is a cnsd run in-process over the simulated cloud.
type overCloud struct {
	cloud       *mockcloud.Cloud
	dns, api    string
	config      string // the configuration file
	stderr      *logtest.Buffer
	writeConfig func(zones string)
	// token (testToken unless configured otherwise) and dnsListen, when
	// set, are written as api.token (none: cnsd uses its token file) and
	// instead of the DNS address cnsd was started on; extra, when set, is
	// further top-level members of the configuration (",\"key\": …").
	token, dnsListen, extra string
	// store, when set, is the body of the store settings instead of the
	// embedded store's file.
	store string
}

// startOverCloud runs cnsd with the embedded store over the simulated
// cloud of cloudFixture (HTTP APIs and a real slapd) with forward_zones'
// body zones, until the test ends.
func startOverCloud(t *testing.T, zones string) *overCloud {
	t.Helper()
	return startOverFixture(t, cloudFixture(), zones)
}

// startOverFixture is startOverCloud over the cloud of fixture f.
func startOverFixture(t testing.TB, f *mockcloud.Fixture, zones string) *overCloud {
	t.Helper()
	return startOverMock(t, mockcloud.New(f, nil), zones)
}

// startOverMock is startOverCloud over cloud.
func startOverMock(t testing.TB, cloud *mockcloud.Cloud, zones string) *overCloud {
	t.Helper()
	return startOverMockWith(t, cloud, zones, nil)
}

// startOverMockWith is startOverMock with the settings configure sets on
// the overCloud (token, extra, store…) before the first configuration is
// written.
func startOverMockWith(t testing.TB, cloud *mockcloud.Cloud, zones string, configure func(*overCloud)) *overCloud {
	t.Helper()
	cloudAPI := httptest.NewServer(cloud.Handler())
	t.Cleanup(cloudAPI.Close)
	ldap := ufdstest.Start(t, cloud)
	dir := t.TempDir()
	ports := freePorts(t, 2)
	cfgPath := filepath.Join(dir, "cnsd.json")
	c := &overCloud{cloud: cloud, config: cfgPath, dns: fmt.Sprintf("127.0.0.1:%d", ports[0]),
		api: fmt.Sprintf("http://127.0.0.1:%d", ports[1]), stderr: &logtest.Buffer{}, token: testToken}
	c.writeConfig = func(zones string) {
		dnsListen, token := c.dns, ""
		if c.dnsListen != "" {
			dnsListen = c.dnsListen
		}
		if c.token != "" {
			token = fmt.Sprintf(`, "token": %q`, c.token)
		}
		storeBody := fmt.Sprintf(`"path": %q`, filepath.Join(dir, "cnsd.db"))
		if c.store != "" {
			storeBody = c.store
		}
		cfg := fmt.Sprintf(`{"my_name": "ns1.example.test", "hostmaster": "hostmaster@example.test",
  "forward_zones": {%s}, "allow_transfer": ["192.0.2.0/24", "127.0.0.1"],
  "store": {%s}, "dns": {"listen": [%q]}, "api": {"listen": "127.0.0.1:%d"%s},
  "vmapi_opts": {"url": %q}, "cnapi_opts": {"url": %q, "poll_seconds": 1}, "napi_opts": {"url": %q},
  "ufds_opts": {"url": %q, "bindDN": %q, "bindPassword": %q}%s}`, zones,
			storeBody, dnsListen, ports[1], token, cloudAPI.URL, cloudAPI.URL, cloudAPI.URL, ldap.URL, ufdstest.RootDN, ufdstest.Password, c.extra)
		// Written whole under another name and renamed, as cnsadm does,
		// so cnsd never reads half a file.
		tmp := cfgPath + ".new"
		if err := os.WriteFile(tmp, []byte(cfg), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.Rename(tmp, cfgPath); err != nil {
			t.Fatal(err)
		}
	}
	if configure != nil {
		configure(c)
	}
	c.writeConfig(zones)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- run(ctx, []string{"-config", cfgPath}, &bytes.Buffer{}, c.stderr) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("cnsd: %v\n%s", err, c.stderr.String())
		}
	})
	return c
}
