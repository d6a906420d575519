package main

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
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
