package secondarytest

import (
	"fmt"
	"net/netip"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// StartBIND starts named as a secondary of cfg.Primary for cfg.Zones (and
// the members of cfg.Catalog). It runs in the foreground (-g) with every
// log line on stderr, which goes to the log file.
func StartBIND(t testing.TB, cfg Config) *Secondary {
	t.Helper()
	bin := binary(t, "named", "CNSD_NAMED", "bind9")
	conf := func(dir string, addr netip.AddrPort) string { return bindConf(dir, addr, cfg) }
	// -4 or -6: one address family, the one it listens on; -n 1: one
	// worker thread, the machine is small and shared; -d 3 adds the lines
	// that name IXFR and AXFR.
	family := "-4"
	if cfg.listen().Is6() {
		family = "-6"
	}
	return startConfigured(t, "bind", bin, "named.conf", "named.log", cfg.listen(), conf, func(path string) []string {
		return []string{"-g", family, "-n", "1", "-d", "3", "-c", path}
	})
}

// StartBINDWith starts named with the harness's options (listening,
// logging, no control channel) and statements, the key and zone
// statements an operator would install — the output of cnsadm
// bind-config without -catalog, say — in place of the zone statements
// StartBIND writes for cfg.Zones; of cfg only Listen and SerialQueryRate
// are used.
// Zone files go where statements say, relative to the secondary's
// directory, in which a directory cnsd is made for bind-config's
// "cnsd/ZONE.db".
func StartBINDWith(t testing.TB, cfg Config, statements string) *Secondary {
	t.Helper()
	bin := binary(t, "named", "CNSD_NAMED", "bind9")
	family := "-4"
	if cfg.listen().Is6() {
		family = "-6"
	}
	conf := func(dir string, addr netip.AddrPort) string {
		if err := os.MkdirAll(filepath.Join(dir, "cnsd"), 0o755); err != nil {
			t.Fatalf("secondarytest: %v", err)
		}
		return bindConf(dir, addr, Config{Listen: cfg.Listen, SerialQueryRate: cfg.SerialQueryRate}) + statements
	}
	return startConfigured(t, "bind", bin, "named.conf", "named.log", cfg.listen(), conf, func(path string) []string {
		return []string{"-g", family, "-n", "1", "-d", "3", "-c", path}
	})
}

// bindConf is a named.conf for a secondary listening on addr. The
// control channel is off (controls {}) so that several instances do not
// fight over port 953.
func bindConf(dir string, addr netip.AddrPort, cfg Config) string {
	var b strings.Builder
	key := ""
	if cfg.TSIG != nil {
		fmt.Fprintf(&b, "key %q {\n\talgorithm %s;\n\tsecret %q;\n};\n", bare(fqdn(cfg.TSIG.Name)), cfg.TSIG.Algorithm, cfg.TSIG.Secret)
		key = fmt.Sprintf(" key %q", bare(fqdn(cfg.TSIG.Name)))
	}
	var each []string
	for _, p := range append([]netip.AddrPort{cfg.Primary}, cfg.MorePrimaries...) {
		each = append(each, fmt.Sprintf("%s port %d%s", p.Addr(), p.Port(), key))
	}
	primaries := strings.Join(each, "; ")
	fmt.Fprintf(&b, `controls { };
options {
	directory %q;
	pid-file %q;
	session-keyfile %q;
	%s
	recursion no;
	notify no;
	allow-query { any; };
	allow-notify { any; };
	dnssec-validation no;
	ixfr-from-differences no;
	server-id %q;
`, dir, filepath.Join(dir, "named.pid"), filepath.Join(dir, "session.key"), bindListen(addr), identity(dir))
	switch {
	case cfg.SerialQueryRate == 0:
		b.WriteString("\tserial-query-rate 1000;\n")
	case cfg.SerialQueryRate > 0:
		fmt.Fprintf(&b, "\tserial-query-rate %d;\n", cfg.SerialQueryRate)
	}
	if cfg.Catalog != "" {
		// min-update-interval: BIND applies a catalog's changes at most
		// every 5 s by default.
		fmt.Fprintf(&b, "\tcatalog-zones {\n\t\tzone %q default-primaries { %s; } zone-directory %q min-update-interval 1;\n\t};\n",
			bare(fqdn(cfg.Catalog)), primaries, dir)
	}
	b.WriteString("};\n")
	zones := cfg.Zones
	if cfg.Catalog != "" {
		zones = append([]string{cfg.Catalog}, zones...)
	}
	for _, z := range zones {
		z = bare(fqdn(z))
		fmt.Fprintf(&b, "zone %q {\n\ttype secondary;\n\tprimaries { %s; };\n\tfile %q;\n};\n",
			z, primaries, z+".db")
	}
	return b.String()
}

// bindListen is the options that make named listen on addr only.
func bindListen(addr netip.AddrPort) string {
	if addr.Addr().Is6() {
		return fmt.Sprintf("listen-on { none; };\n\tlisten-on-v6 port %d { %s; };", addr.Port(), addr.Addr())
	}
	return fmt.Sprintf("listen-on port %d { %s; };\n\tlisten-on-v6 { none; };", addr.Port(), addr.Addr())
}

// StartBINDPrimary starts named as the primary of zone, loaded from
// zoneText (a master file) at the first start, taking DNS UPDATE from
// loopback and sending NOTIFY at once (notify-delay 0) to the addresses
// notify returns when it starts: BIND as the primary operators compare
// cnsd with. notify is asked again by Restart, so a secondary started
// after it, from its address, is told by restarting it; the zone keeps
// its updates (its journal) across the restart.
func StartBINDPrimary(t testing.TB, zone, zoneText string, notify func() []netip.AddrPort) *Secondary {
	t.Helper()
	bin := binary(t, "named", "CNSD_NAMED", "bind9")
	zone = bare(fqdn(zone))
	conf := func(dir string, addr netip.AddrPort) string {
		file := filepath.Join(dir, zone+".db")
		if _, err := os.Stat(file); err != nil {
			if err := os.WriteFile(file, []byte(zoneText), 0o644); err != nil {
				t.Fatalf("secondarytest: %v", err)
			}
		}
		var also []string
		for _, a := range notify() {
			also = append(also, fmt.Sprintf("%s port %d;", a.Addr(), a.Port()))
		}
		alsoNotify := ""
		if len(also) > 0 {
			alsoNotify = "also-notify { " + strings.Join(also, " ") + " };"
		}
		return fmt.Sprintf(`controls { };
options {
	directory %q;
	pid-file %q;
	session-keyfile %q;
	%s
	recursion no;
	dnssec-validation no;
	allow-query { any; };
	notify explicit;
	notify-delay 0;
	%s
	server-id %q;
};
zone %q {
	type primary;
	file %q;
	allow-update { 127.0.0.1; ::1; };
	allow-transfer { any; };
};
`, dir, filepath.Join(dir, "named.pid"), filepath.Join(dir, "session.key"), bindListen(addr), alsoNotify,
			identity(dir), zone, file)
	}
	return startConfigured(t, "bind", bin, "named.conf", "named.log", Config{}.listen(), conf, func(path string) []string {
		return []string{"-g", "-4", "-n", "1", "-c", path}
	})
}
