package main

import (
	"bytes"
	"context"
	"fmt"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/miekg/dns"

	"github.com/cnsd/cnsd/api"
	"github.com/cnsd/cnsd/schema"
	"github.com/cnsd/cnsd/store"
)

// bindTool finds one of BIND's checking tools, failing the test when it
// is missing.
func bindTool(t *testing.T, name string) string {
	t.Helper()
	p, err := exec.LookPath(name)
	if err != nil {
		t.Fatalf("%s not found: install the Debian package bind9-utils (scripts/testdeps.sh)", name)
	}
	return p
}

// TestBindConfigCheckNames: what bind-config prints is a configuration
// named-checkconf accepts, and it turns check-names off for the zones
// (one by one, or every zone of the catalog): a service tagged
// "_ldap._tcp" has A and TXT records at _ldap._tcp.svc.<owner>.<zone>,
// as in Triton CNS (zonegen's 17-srv-label golden), and BIND's
// check-names rejects that owner for A records (named-checkzone -k fail
// below, the primary-zone default) or logs it at every load (a
// secondary's default, warn); with ignore it loads silently.
func TestBindConfigCheckNames(t *testing.T) {
	checkconf, checkzone := bindTool(t, "named-checkconf"), bindTool(t, "named-checkzone")
	url, _, _ := startAPI(t)
	dir := t.TempDir()
	for _, tc := range []struct {
		name, prefix, want string
		args               []string
	}{
		{"zones", "options { directory \"" + dir + "\"; };\n", "\tcheck-names ignore;\n", nil},
		{"catalog", "", "\tcheck-names secondary ignore;\n", []string{"-catalog"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var stdout bytes.Buffer
			args := append([]string{"-api", url, "-token", "s3cret", "-config", "/nonexistent", "bind-config", "-primary", "192.0.2.1"}, tc.args...)
			if err := run(context.Background(), args, &stdout, &stdout); err != nil {
				t.Fatalf("cnsadm %q: %v", args, err)
			}
			if !strings.Contains(stdout.String(), tc.want) {
				t.Errorf("bind-config %v lacks %q:\n%s", tc.args, tc.want, stdout.String())
			}
			conf := filepath.Join(dir, tc.name+".conf")
			if err := os.WriteFile(conf, []byte(tc.prefix+stdout.String()), 0o644); err != nil {
				t.Fatal(err)
			}
			if out, err := exec.Command(checkconf, conf).CombinedOutput(); err != nil {
				t.Errorf("named-checkconf: %v\n%s\n%s", err, out, stdout.String())
			}
		})
	}
	zone := filepath.Join(dir, "pub.example.com.db")
	if err := os.WriteFile(zone, []byte(`$TTL 60
@	SOA	ns1.example.com. hostmaster.example.com. 1 60 60 60 60
@	NS	ns1.example.com.
_ldap._tcp.svc.alice	A	10.1.2.3
_ldap._tcp.svc.alice	TXT	"c43ae904-528e-11e5-8df0-fbdc6110b017"
_ldap._tcp.svc.alice	SRV	0 10 389 web0.inst.alice
web0.inst.alice	A	10.1.2.3
`), 0o644); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(checkzone, "-k", "fail", "pub.example.com", zone).CombinedOutput()
	if err == nil || !strings.Contains(string(out), "bad owner name (check-names)") {
		t.Errorf("named-checkzone -k fail: %v\n%s\nwant the A record's owner refused", err, out)
	}
	out, err = exec.Command(checkzone, "-k", "ignore", "pub.example.com", zone).CombinedOutput()
	if err != nil || strings.Contains(string(out), "check-names") {
		t.Errorf("named-checkzone -k ignore: %v\n%s\nwant the zone loaded without a word", err, out)
	}
}

const (
	bigZone   = "dc1.cns.example.com"
	smallZone = "2.0.192.in-addr.arpa"
)

// bigAPI serves GET /zones for a zone with a service of members members
// (an A RRset of that many records) and a reverse zone of one record.
func bigAPI(t *testing.T, members int) string {
	t.Helper()
	ctx := context.Background()
	st, err := store.Open(ctx, store.NewMemory(), store.Options{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	for i := range members {
		vm := fmt.Sprintf("00000000-0000-4000-8000-%012d", i)
		addr := fmt.Sprintf("10.1.%d.%d", i/250, i%250+1)
		if _, err := st.CommitSource(ctx, vm, map[string][]store.Record{bigZone + ".": {
			store.NewRecord(fmt.Sprintf("web%d.inst.alice.%s.", i, bigZone), dns.TypeA, addr, vm),
			store.NewRecord("web.svc.alice."+bigZone+".", dns.TypeA, addr, vm),
		}}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := st.CommitSource(ctx, "ptr", map[string][]store.Record{smallZone + ".": {
		store.NewRecord("1."+smallZone+".", dns.TypePTR, "web0.inst.alice."+bigZone+".", "ptr")}}); err != nil {
		t.Fatal(err)
	}
	h := httptest.NewServer(api.New(st, &fakeDNS{}, api.Access{Mode: schema.AuthNone}, nil))
	t.Cleanup(h.Close)
	return h.URL
}

// bindConfigFile is a cnsd configuration with a TSIG key for the forward
// zone and another for the catalog, listening on listen.
func bindConfigFile(t *testing.T, listen string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "cnsd.json")
	doc := `{"my_name": "ns1.example.com", "hostmaster": "hostmaster@example.com",
  "forward_zones": {"` + bigZone + `": {"networks": ["*"], "tsig_key": "zone-key"}},
  "catalog_zone": {"tsig_key": "catalog-key"},
  "dns": {"listen": ["` + listen + `"]},
  "tsig_keys": {"zone-key": {"secret": "c2VjcmV0IGtleSBmb3IgdHJhbnNmZXJz"},
    "catalog-key": {"algorithm": "hmac-sha512", "secret": "AAECAwQFBgcICQ=="},
    "other-key": {"algorithm": "hmac-sha1", "secret": "AAEC"}}}`
	if err := os.WriteFile(path, []byte(doc), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := schema.Load(path); err != nil {
		t.Fatalf("test configuration: %v", err)
	}
	return path
}

// TestBindConfigFlags runs bind-config with every combination of its
// flags that changes what it prints — zones or -catalog; -primary IPv4
// or IPv6, with or without a port, or the configuration's dns.listen;
// TSIG from the configuration, from -key, or none; max-records-per-type
// sized from the zones or set — over a zone with a 180-member service,
// and checks each output with named-checkconf and for the statements it
// must hold.
func TestBindConfigFlags(t *testing.T) {
	checkconf := bindTool(t, "named-checkconf")
	url := bigAPI(t, 180)
	dir := t.TempDir()
	type flags struct {
		name      string
		cfgListen string // "": no configuration
		args      []string
		want      []string
		not       []string
	}
	primaries := []struct {
		name, listen string
		args         []string
		want         string
	}{
		{"ipv4", "", []string{"-primary", "192.0.2.1"}, "192.0.2.1"},
		{"ipv4 port", "", []string{"-primary", "127.0.0.1:15353"}, "127.0.0.1 port 15353"},
		{"ipv4 port 53", "", []string{"-primary", "192.0.2.1:53"}, "192.0.2.1"},
		{"ipv6", "", []string{"-primary", "2001:db8::1"}, "2001:db8::1"},
		{"ipv6 brackets", "", []string{"-primary", "[2001:db8::1]"}, "2001:db8::1"},
		{"ipv6 port", "", []string{"-primary", "[::1]:53"}, "::1"},
		{"ipv6 other port", "", []string{"-primary", "[2001:db8::1]:5353"}, "2001:db8::1 port 5353"},
		{"mapped ipv4", "", []string{"-primary", "[::ffff:192.0.2.1]:5353"}, "192.0.2.1 port 5353"},
		{"dns.listen", "192.0.2.7:5300", nil, "192.0.2.7 port 5300"},
		{"dns.listen ipv6", "[2001:db8::7]:53", nil, "2001:db8::7"},
	}
	var cases []flags
	for _, mode := range []string{"zones", "catalog"} {
		for _, p := range primaries {
			for _, tsig := range []string{"none", "configured", "-key"} {
				if tsig == "none" && p.listen != "" {
					continue // the configuration names keys: "configured"
				}
				for _, limit := range []string{"sized", "set", "unlimited"} {
					c := flags{name: strings.Join([]string{mode, p.name, tsig, limit}, "/"), cfgListen: p.listen,
						args: append([]string{}, p.args...)}
					if tsig != "none" && c.cfgListen == "" {
						c.cfgListen = "192.0.2.9:53" // a configuration for the keys; -primary wins
					}
					key := ""
					switch {
					case tsig == "-key":
						c.args = append(c.args, "-key", "other-key")
						key = "other-key"
					case tsig == "configured" && mode == "zones":
						key = "zone-key"
					case tsig == "configured":
						key = "catalog-key"
					}
					prim := p.want
					if key != "" {
						prim += ` key "` + key + `"`
						c.want = append(c.want, `key "`+key+`" {`)
					} else {
						c.not = append(c.not, "key ")
					}
					if mode == "catalog" {
						c.args = append(c.args, "-catalog")
						c.want = append(c.want, "default-primaries { "+prim+"; }", "check-names secondary ignore;",
							"\tserial-query-rate 1000;")
					} else {
						c.want = append(c.want, `zone "`+bigZone+`" {`, `zone "`+smallZone+`" {`, "check-names ignore;",
							"// Put in named.conf's options: serial-query-rate 1000;")
						if tsig != "configured" {
							c.want = append(c.want, "primaries { "+prim+"; };")
						} else {
							// Only the forward zone has a key.
							c.want = append(c.want, "primaries { "+prim+"; };\n\tfile \"cnsd/"+bigZone+".db\"",
								"primaries { "+p.want+"; };\n\tfile \"cnsd/"+smallZone+".db\"")
						}
					}
					switch limit {
					case "sized":
						// 2 x 180; the reverse zone's single records need nothing.
						c.want = append(c.want, "max-records-per-type 360;", "largest RRset has 180 records")
					case "set":
						c.args = append(c.args, "-max-records-per-type", "1000")
						c.want = append(c.want, "max-records-per-type 1000;")
					case "unlimited":
						c.args = append(c.args, "-max-records-per-type", "0")
						c.want = append(c.want, "max-records-per-type 0;")
					}
					cases = append(cases, c)
				}
			}
		}
	}
	for i, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			cfgPath := "/nonexistent"
			if tc.cfgListen != "" {
				cfgPath = bindConfigFile(t, tc.cfgListen)
			}
			var stdout, stderr bytes.Buffer
			args := append([]string{"-api", url, "-config", cfgPath, "bind-config"}, tc.args...)
			if err := run(context.Background(), args, &stdout, &stderr); err != nil {
				t.Fatalf("cnsadm %q: %v\n%s", args, err, stderr.String())
			}
			out := stdout.String()
			for _, w := range tc.want {
				if !strings.Contains(out, w) {
					t.Errorf("output lacks %q", w)
				}
			}
			for _, w := range tc.not {
				if strings.Contains(out, w) {
					t.Errorf("output has %q", w)
				}
			}
			if strings.Contains(out, ":15353") || strings.Contains(out, "]:") {
				t.Errorf("a port written addr:port, which BIND rejects")
			}
			conf := filepath.Join(dir, fmt.Sprintf("%d.conf", i))
			text := out
			if !strings.Contains(out, "options {") {
				text = "options { directory \"" + dir + "\"; };\n" + out
			}
			if err := os.WriteFile(conf, []byte(text), 0o644); err != nil {
				t.Fatal(err)
			}
			if b, err := exec.Command(checkconf, conf).CombinedOutput(); err != nil {
				t.Errorf("named-checkconf: %v\n%s", err, b)
			}
			if t.Failed() {
				t.Logf("cnsadm %q:\n%s", args, out)
			}
		})
	}
}

// TestBindConfigSmallZones: with no RRset over half of BIND's default
// limit, bind-config leaves max-records-per-type alone.
func TestBindConfigSmallZones(t *testing.T) {
	url := bigAPI(t, 50)
	for _, mode := range [][]string{nil, {"-catalog"}} {
		var stdout bytes.Buffer
		args := append([]string{"-api", url, "-config", "/nonexistent", "bind-config", "-primary", "192.0.2.1"}, mode...)
		if err := run(context.Background(), args, &stdout, &stdout); err != nil {
			t.Fatalf("cnsadm %q: %v", args, err)
		}
		if strings.Contains(stdout.String(), "max-records-per-type") {
			t.Errorf("cnsadm %q set max-records-per-type for a 50-record RRset:\n%s", args, stdout.String())
		}
	}
}

// TestBindConfigBadPrimary: -primary takes IP addresses only, and an
// unspecified dns.listen address is no primary.
func TestBindConfigBadPrimary(t *testing.T) {
	url := bigAPI(t, 1)
	for _, tc := range []struct {
		name, cfgListen string
		args            []string
		want            string
	}{
		{"host name", "", []string{"-primary", "ns1.example.com"}, "is not an IP address"},
		{"host name and port", "", []string{"-primary", "ns1.example.com:53"}, "is not an IP address"},
		{"no primary", "", nil, "give -primary ADDRESS"},
		{"unspecified listen", "0.0.0.0:53", nil, "is every address"},
		{"unknown key", "192.0.2.1:53", []string{"-key", "nope"}, "no such key"},
		{"key without configuration", "", []string{"-primary", "192.0.2.1", "-key", "zone-key"}, "-key needs the configuration"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfgPath := "/nonexistent"
			if tc.cfgListen != "" {
				cfgPath = bindConfigFile(t, tc.cfgListen)
			}
			var out bytes.Buffer
			err := run(context.Background(), append([]string{"-api", url, "-config", cfgPath, "bind-config"}, tc.args...), &out, &out)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("err %v, want %q", err, tc.want)
			}
		})
	}
}
