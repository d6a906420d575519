package main

import (
	"flag"
	"fmt"
	"log/slog"
	"os"
	"regexp"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/miekg/dns"

	"github.com/cnsd/cnsd/logtest"
	"github.com/cnsd/cnsd/mockcloud"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/")

const (
	realisticFixture = "../../mockcloud/testdata/realistic.json"
	realisticGolden  = "testdata/realistic.golden"
)

// realisticZones: the public pools in one zone, the internal network in
// another, and a catch-all for the rest (fabrics, account networks).
func realisticZones(f *mockcloud.Fixture) string {
	uuid := func(name string) string {
		for _, n := range f.Networks {
			if n.Name == name {
				return n.UUID
			}
		}
		for _, p := range f.NetworkPools {
			if p.Name == name {
				return p.UUID
			}
		}
		panic("no network or pool " + name + " in " + realisticFixture)
	}
	return fmt.Sprintf(`"dc1.cns.example.test": {"networks": [%q, %q]}, "int.cns.example.test": {"networks": [%q]}, `+
		`"user.cns.example.test": {"networks": ["*"]}`, uuid("public"), uuid("public-v6"), uuid("internal"))
}

// TestDaemonOverRealisticCloud runs the whole daemon over a cloud written
// down from the real services' shapes (mockcloud/testdata/realistic.json:
// every field, several brands, odd-typed tags and metadata, a NIC only
// NAPI knows the network of, compute nodes down and not set up, accounts
// with CNS on, off and not approved) and compares every zone it serves,
// transferred whole, with testdata/realistic.golden (go test -run
// TestDaemonOverRealisticCloud -update rewrites it). It also checks the
// cases the fixture is there for by hand.
func TestDaemonOverRealisticCloud(t *testing.T) {
	f, err := mockcloud.LoadFixture(realisticFixture)
	if err != nil {
		t.Fatal(err)
	}
	var cloudLog logtest.Buffer
	cloud := mockcloud.New(f, &mockcloud.Options{Logger: slog.New(slog.NewTextHandler(&cloudLog, nil))})
	c := startOverMock(t, cloud, realisticZones(f))
	// The names to compare need use_alias and use_login: written once cnsd
	// serves, and read at once on SIGHUP (a rewrite before cnsd first
	// looked at the file could be taken for the file it started with).
	waitFor(t, "cnsd to serve dc1.cns.example.test", func() bool { return soa(c.dns, "dc1.cns.example.test.") })
	c.extra = `, "use_login": true, "use_alias": true`
	c.writeConfig(realisticZones(f))
	if err := syscall.Kill(os.Getpid(), syscall.SIGHUP); err != nil {
		t.Fatal(err)
	}
	web0 := "web0.inst.alice.dc1.cns.example.test."
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("cnsd log:\n%s", c.stderr.String())
		}
	})
	waitFor(t, web0+" with use_alias and use_login", func() bool { return answers(c.dns, web0, "203.0.113.10") })
	got := stableTransfers(t, c)
	if *update {
		if err := os.WriteFile(realisticGolden, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(realisticGolden)
	if err != nil {
		t.Fatalf("%v (run with -update to write it)", err)
	}
	if got != string(want) {
		t.Errorf("the zones cnsd serves differ from %s (-update rewrites it):\n%s", realisticGolden, lineDiff(string(want), got))
	}
	checkRealistic(t, f, got)
	if n := f.ExtraKeys()["vm"]; n == 0 || len(cloudLog.Lines("extra keys per kind", fmt.Sprintf("vm=%d", n))) != 1 {
		t.Errorf("the simulated cloud did not log its count of extra keys (vm=%d) once:\n%s", n, cloudLog.String())
	}
}

// stableTransfers transfers every zone cnsd serves until two rounds a
// second apart read the same, and returns them in one text.
func stableTransfers(t *testing.T, c *overCloud) string {
	t.Helper()
	var last string
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		cur := transferAll(t, c)
		if cur == last {
			return cur
		}
		last = cur
		time.Sleep(time.Second)
	}
	t.Fatalf("the zones did not settle in 30 s:\n%s", last)
	return ""
}

var soaSerial = regexp.MustCompile(`(\tSOA\t\S+ \S+ )\d+ `)

// transferAll transfers each zone GET /zones lists, the catalog zone
// included, and writes each as "; zone <name>" and its records sorted,
// the SOA serial (a time) as SERIAL.
func transferAll(t *testing.T, c *overCloud) string {
	t.Helper()
	var zones []struct{ Name string }
	getJSON(t, c.api+"/zones", &zones)
	var b strings.Builder
	for _, z := range zones {
		m := new(dns.Msg)
		m.SetAxfr(dns.Fqdn(z.Name))
		ch, err := (&dns.Transfer{}).In(m, c.dns)
		if err != nil {
			t.Fatalf("AXFR %s: %v", z.Name, err)
		}
		var lines []string
		for env := range ch {
			if env.Error != nil {
				t.Fatalf("AXFR %s: %v", z.Name, env.Error)
			}
			for _, rr := range env.RR {
				lines = append(lines, soaSerial.ReplaceAllString(rr.String(), "${1}SERIAL "))
			}
		}
		slices.Sort(lines)
		lines = slices.Compact(lines) // the SOA comes first and last
		fmt.Fprintf(&b, "; zone %s\n%s\n", z.Name, strings.Join(lines, "\n"))
	}
	return b.String()
}

// lineDiff lists the lines only in want (-) and only in got (+).
func lineDiff(want, got string) string {
	w, g := strings.Split(want, "\n"), strings.Split(got, "\n")
	var out []string
	for _, l := range w {
		if !slices.Contains(g, l) {
			out = append(out, "- "+l)
		}
	}
	for _, l := range g {
		if !slices.Contains(w, l) {
			out = append(out, "+ "+l)
		}
	}
	return strings.Join(out, "\n")
}

// checkRealistic checks by hand, in the transferred zones, the cases the
// realistic fixture is there for. Each name is relative to
// dc1.cns.example.test unless it ends with a dot.
func checkRealistic(t *testing.T, f *mockcloud.Fixture, zones string) {
	vm := func(alias string) mockcloud.VM {
		for _, v := range f.VMs {
			if v.Alias == alias {
				return v
			}
		}
		t.Fatalf("no VM %q in %s", alias, realisticFixture)
		return mockcloud.VM{}
	}
	const web = "web.svc.alice"
	tests := []struct {
		name, rr string // rr: "owner TYPE value"
		want     bool
	}{
		{"a NIC VMAPI shows without network_uuid is repaired from NAPI", "repaired0.inst.alice A 198.51.100.30", true},
		{"a NIC VMAPI shows without an address takes NAPI's ip", "repaired1.inst.alice A 198.51.100.31", true},
		{"a set-up compute node has its CMON name, also when down",
			"ffcd88b9-d170-465a-9f05-f4d11a38b927.cmon CNAME cmon.dc1.cns.example.test.", true},
		{"a compute node not set up has none", "f9493d41-7afd-4260-acd9-2a4017cdc79a.cmon CNAME cmon.dc1.cns.example.test.", false},
		{"a destroyed VM publishes nothing", "old-web.inst.alice A 203.0.113.12", false},
		{"a failed VM publishes nothing", "broken0.inst.alice A 203.0.113.13", false},
		{"triton.cns.status true (a boolean) is not up", web + " A 203.0.113.16", false},
		{"... and the VM waits in verifying", web + ` TXT "verifying:` + vm("odd-status-bool").UUID + `"`, true},
		{"triton.cns.status 1 (a number) is not up", web + ` TXT "verifying:` + vm("odd-status-num").UUID + `"`, true},
		{"triton.cns.status null is not up", web + ` TXT "verifying:` + vm("odd-status-null").UUID + `"`, true},
		{`triton.cns.disable "true" (a string) disables`, "odd-disable-str.inst.alice A 203.0.113.18", false},
		{"triton.cns.disable 0 (a number) disables", "odd-disable-zero.inst.alice A 203.0.113.21", false},
		{"triton.cns.disable false (a boolean) does not", web + " A 203.0.113.20", true},
		{`triton.cns.disable "false" does not either (docs/differences.md)`, web + " A 203.0.113.19", true},
		{"triton.cns.services 8080 (a number) gives no service", web + ` TXT "` + vm("odd-services-num").UUID + `"`, false},
		{"... but the instance is listed", "odd-services-num.inst.alice A 203.0.113.22", true},
		{"triton.cns.services null hides the docker label", "api.svc.alice A 203.0.113.23", false},
		{"the docker label is read when the tag is absent", web + " A 203.0.113.11", true},
		{"triton.cns.reverse_ptr 42 (a number) is no PTR", "24.113.0.203.in-addr.arpa. PTR 42.", false},
		{"... the primary name is", "24.113.0.203.in-addr.arpa. PTR odd-ptr-num.inst.alice.dc1.cns.example.test.", true},
		{"an acme-challenge number is its text", `_acme-challenge.odd-acme-num.inst.alice TXT "12345"`, true},
		{"a valid reverse_ptr lists an account not approved", "41.113.0.203.in-addr.arpa. PTR carol.example.net.", true},
		{"other VMs of that account are not listed", "carol-web.inst.carol A 203.0.113.42", false},
		{"triton_cns_enabled false lists nothing", "bob-web.inst.bob A 203.0.113.40", false},
		{"triton_cns_enabled absent lists nothing", "dave-app.inst.dave A 203.0.113.43", false},
		{"a VM on a down compute node leaves services", web + ` TXT "verifying:` + vm("cn-down0").UUID + `"`, true},
		{"a running compute node with an old heartbeat is up", web + " A 203.0.113.28", true},
		{"a compute node not set up lists nothing", "cn-unset0.inst.alice A 203.0.113.27", false},
		{"a fabric in the catch-all zone prefixes the network name",
			"default.erin-app.inst.erin.user.cns.example.test. A 192.168.128.5", true},
		{"manta NICs are not published", "loadbalancer-0.inst.poseidon.user.cns.example.test. A 172.27.0.10", false},
		{"poseidon's loadbalancer is a service", "loadbalancer.svc.poseidon A 203.0.113.60", true},
		{"admin VMs get the bare service name", "status A 203.0.113.52", true},
		{"dhcp addresses are skipped, the NIC's IPv6 is not", "dhcp0.inst.alice AAAA 2001:db8:100::20", true},
	}
	for _, tt := range tests {
		if got := hasRR(zones, tt.rr); got != tt.want {
			t.Errorf("%s: %q published = %v, want %v", tt.name, tt.rr, got, tt.want)
		}
	}
}

// hasRR reports whether the transferred zones hold the record "owner TYPE
// value"; an owner without a final dot is in dc1.cns.example.test.
func hasRR(zones, rr string) bool {
	owner, rest, _ := strings.Cut(rr, " ")
	typ, value, _ := strings.Cut(rest, " ")
	if !strings.HasSuffix(owner, ".") {
		owner += ".dc1.cns.example.test."
	}
	for l := range strings.Lines(zones) {
		f := strings.SplitN(strings.TrimSuffix(l, "\n"), "\t", 5)
		if len(f) == 5 && f[0] == owner && f[3] == typ && f[4] == value {
			return true
		}
	}
	return false
}
