package secondarytest

import (
	"net/netip"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
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
		{"transfers allowed, no rate limit", Config{Primary: primary, Zones: []string{"a.test"}, AllowTransfer: true, NoRateLimit: true}},
		{"ipv6", Config{Primary: netip.MustParseAddrPort("[::1]:5300"), Zones: []string{"a.test"}, Listen: netip.IPv6Loopback()}},
		{"stock serial-query-rate", Config{Primary: primary, Zones: []string{"a.test"}, SerialQueryRate: StockSerialQueryRate}},
		{"serial-query-rate 50", Config{Primary: primary, Zones: []string{"a.test"}, SerialQueryRate: 50}},
	}
	checkers := []struct {
		kind, tool, env, pkg, file string
		conf                       func(dir string, addr netip.AddrPort, cfg Config) string
		args                       func(path string) []string
		catalogs                   bool
	}{
		{"bind", "named-checkconf", "CNSD_NAMED_CHECKCONF", "bind9-utils", "named.conf", bindConf,
			func(path string) []string { return []string{path} }, true},
		{"knot", "knotc", "CNSD_KNOTC", "knot", "knot.conf", knotConf,
			func(path string) []string { return []string{"-c", path, "conf-check"} }, true},
		// NSD 4.6 has no catalog zones; StartNSD refuses them.
		{"nsd", "nsd-checkconf", "CNSD_NSD_CHECKCONF", "nsd", "nsd.conf", nsdConf,
			func(path string) []string { return []string{path} }, false},
		// PowerDNS keeps zones in its database; the file is the same for all.
		{"powerdns", "pdns_server", "CNSD_PDNS_SERVER", "pdns-server", "pdns.conf",
			func(dir string, addr netip.AddrPort, _ Config) string { return pdnsConf(dir, addr) },
			pdnsCheckArgs, true},
	}
	for _, tc := range configs {
		for _, ck := range checkers {
			if tc.cfg.Catalog != "" && !ck.catalogs {
				continue
			}
			t.Run(ck.kind+"/"+tc.name, func(t *testing.T) {
				bin := binary(t, ck.tool, ck.env, ck.pkg)
				dir := t.TempDir()
				path := filepath.Join(dir, ck.file)
				text := ck.conf(dir, netip.AddrPortFrom(tc.cfg.listen(), 5353), tc.cfg)
				if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
					t.Fatal(err)
				}
				if out, err := exec.Command(bin, ck.args(path)...).CombinedOutput(); err != nil {
					t.Errorf("%s: %v\n%s\n%s", ck.tool, err, out, text)
				}
			})
		}
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
		{"nsd/nsd.conf", "nsd-checkconf", "CNSD_NSD_CHECKCONF", "nsd", nil},
		{"powerdns/pdns.conf", "pdns_server", "CNSD_PDNS_SERVER", "pdns-server", nil},
	} {
		t.Run(tc.file, func(t *testing.T) {
			bin := binary(t, tc.tool, tc.env, tc.pkg)
			path := filepath.Join("..", "..", "deploy", tc.file)
			args := []string{path}
			switch tc.tool {
			case "knotc":
				args = append([]string{"-c", path}, tc.args...)
			case "pdns_server":
				args = pdnsCheckArgs(path)
			}
			if out, err := exec.Command(bin, args...).CombinedOutput(); err != nil {
				t.Errorf("%s %s: %v\n%s", tc.tool, path, err, out)
			}
		})
	}
}

// pdnsCheckArgs makes pdns_server check the pdns.conf at path: it reads
// pdns.conf from a directory, and fails on an unknown setting.
func pdnsCheckArgs(path string) []string {
	return []string{"--config-dir=" + filepath.Dir(path), "--config=check"}
}

// TestBINDSerialQueryRate: the harness's BIND gets serial-query-rate 1000
// unless told another rate, and none at all (BIND's stock 20) when asked
// for the stock one.
func TestBINDSerialQueryRate(t *testing.T) {
	for _, tc := range []struct {
		name string
		rate int
		want string // the option's line, "" for none
	}{
		{"unset", 0, "\tserial-query-rate 1000;\n"},
		{"given", 50, "\tserial-query-rate 50;\n"},
		{"stock", StockSerialQueryRate, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := Config{Primary: netip.MustParseAddrPort("127.0.0.1:5300"), Zones: []string{"a.test"}, SerialQueryRate: tc.rate}
			text := bindConf(t.TempDir(), netip.MustParseAddrPort("127.0.0.1:5353"), cfg)
			got := ""
			for line := range strings.Lines(text) {
				if strings.Contains(line, "serial-query-rate") {
					got += line
				}
			}
			if got != tc.want {
				t.Errorf("serial-query-rate lines = %q, want %q\n%s", got, tc.want, text)
			}
		})
	}
}
