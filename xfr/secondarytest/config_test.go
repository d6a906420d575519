package secondarytest

import (
	"net/netip"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// TestConfigsCheck runs the servers' own configuration checkers over the
// configurations the harness writes, so that a syntax error shows up as
// such rather than as a secondary that does not start.
func TestConfigsCheck(t *testing.T) {
	primary := netip.MustParseAddrPort("127.0.0.1:5300")
	key := &Key{Name: "xfr-key", Algorithm: "hmac-sha256", Secret: "c2VjcmV0LXNlY3JldC1zZWNyZXQtc2VjcmV0LXNlY3JldA=="}
	configs := []struct {
		name string
		cfg  Config
	}{
		{"zones", Config{Primary: primary, Zones: []string{"a.test", "b.test."}}},
		{"tsig", Config{Primary: primary, Zones: []string{"a.test"}, TSIG: key}},
		{"catalog", Config{Primary: primary, Catalog: "catalog.cnsd.invalid"}},
		{"catalog and tsig", Config{Primary: primary, Catalog: "catalog.cnsd.invalid", Zones: []string{"a.test"}, TSIG: key}},
	}
	for _, tc := range configs {
		t.Run("bind/"+tc.name, func(t *testing.T) {
			bin := binary(t, "named-checkconf", "CNSD_NAMED_CHECKCONF", "bind9-utils")
			dir := t.TempDir()
			conf := filepath.Join(dir, "named.conf")
			if err := os.WriteFile(conf, []byte(bindConf(dir, 5353, tc.cfg)), 0o644); err != nil {
				t.Fatal(err)
			}
			if out, err := exec.Command(bin, conf).CombinedOutput(); err != nil {
				t.Errorf("named-checkconf: %v\n%s\n%s", err, out, bindConf(dir, 5353, tc.cfg))
			}
		})
		t.Run("knot/"+tc.name, func(t *testing.T) {
			bin := binary(t, "knotc", "CNSD_KNOTC", "knot")
			dir := t.TempDir()
			conf := filepath.Join(dir, "knot.conf")
			if err := os.WriteFile(conf, []byte(knotConf(dir, 5353, tc.cfg)), 0o644); err != nil {
				t.Fatal(err)
			}
			if out, err := exec.Command(bin, "-c", conf, "conf-check").CombinedOutput(); err != nil {
				t.Errorf("knotc conf-check: %v\n%s\n%s", err, out, knotConf(dir, 5353, tc.cfg))
			}
		})
	}
}

// TestDeployConfigsCheck: the example secondary configurations shipped in
// deploy/ are valid for the servers they are written for.
func TestDeployConfigsCheck(t *testing.T) {
	for _, tc := range []struct {
		file, tool, env, pkg string
		args                 []string
	}{
		{"bind/named.conf.catalog", "named-checkconf", "CNSD_NAMED_CHECKCONF", "bind9-utils", nil},
		{"bind/named.conf.zones", "named-checkconf", "CNSD_NAMED_CHECKCONF", "bind9-utils", nil},
		{"knot/knot.conf", "knotc", "CNSD_KNOTC", "knot", []string{"conf-check"}},
	} {
		t.Run(tc.file, func(t *testing.T) {
			bin := binary(t, tc.tool, tc.env, tc.pkg)
			path := filepath.Join("..", "..", "deploy", tc.file)
			args := []string{path}
			if tc.tool == "knotc" {
				args = append([]string{"-c", path}, tc.args...)
			}
			if out, err := exec.Command(bin, args...).CombinedOutput(); err != nil {
				t.Errorf("%s %s: %v\n%s", tc.tool, path, err, out)
			}
		})
	}
}
