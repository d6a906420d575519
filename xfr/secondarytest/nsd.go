package secondarytest

import (
	"fmt"
	"net/netip"
	"path/filepath"
	"strings"
	"testing"
)

// StartNSD starts nsd as a secondary of cfg.Primary for cfg.Zones, in the
// foreground (-d) with its log at verbosity 2 (every transfer and NOTIFY)
// on stderr, which goes to the log file. NSD 4.6 has no catalog zones: a
// Config with a Catalog fails the test.
func StartNSD(t testing.TB, cfg Config) *Secondary {
	t.Helper()
	if cfg.Catalog != "" {
		t.Fatalf("secondarytest: NSD 4.6 does not consume catalog zones")
	}
	bin := binary(t, "nsd", "CNSD_NSD", "nsd")
	conf := func(dir string, addr netip.AddrPort) string { return nsdConf(dir, addr, cfg) }
	return startConfigured(t, "nsd", bin, "nsd.conf", "nsd.log", cfg.listen(), conf, func(path string) []string {
		return []string{"-d", "-c", path}
	})
}

// nsdConf is an nsd.conf (NSD 4.x) for a secondary listening on
// 127.0.0.1@port, keeping everything in dir and running as the user the
// test runs as. Zone files are written there, so zones survive a restart.
// xfrd-reload-timeout 0 serves each transfer at once; by default NSD
// waits a second between reloads, which would make every commit of a test
// take a second.
func nsdConf(dir string, addr netip.AddrPort, cfg Config) string {
	var b strings.Builder
	fmt.Fprintf(&b, `server:
	ip-address: %[6]s@%[2]d
	port: %[2]d
	do-ip%[7]d: no
	server-count: 1
	verbosity: 2
	xfrd-reload-timeout: 0
	username: ""
	chroot: ""
	zonesdir: %[1]q
	database: ""
	zonelistfile: %[3]q
	xfrdfile: %[4]q
	xfrdir: %[1]q
	pidfile: %[5]q
	hide-version: no
	zonefiles-check: no
	identity: %[8]q
%[9]s
remote-control:
	control-enable: no

`, dir, addr.Port(), filepath.Join(dir, "zone.list"), filepath.Join(dir, "xfrd.state"), filepath.Join(dir, "nsd.pid"),
		addr.Addr(), otherFamily(addr.Addr()), identity(dir), rateLimit(cfg))
	key := "NOKEY"
	if cfg.TSIG != nil {
		fmt.Fprintf(&b, "key:\n\tname: %q\n\talgorithm: %s\n\tsecret: %q\n\n",
			fqdn(cfg.TSIG.Name), cfg.TSIG.Algorithm, cfg.TSIG.Secret)
		key = fqdn(cfg.TSIG.Name)
	}
	for _, z := range cfg.Zones {
		fmt.Fprintf(&b, "zone:\n\tname: %q\n\tzonefile: %q\n\trequest-xfr: %s@%d %s\n\tallow-notify: %s %s\n",
			bare(fqdn(z)), bare(fqdn(z))+".zone", cfg.Primary.Addr(), cfg.Primary.Port(), key, cfg.Primary.Addr(), key)
		if cfg.TSIG != nil {
			// NOTIFY from cnsd may come unsigned (a zone without a key
			// of its own); the transfer that follows is signed.
			fmt.Fprintf(&b, "\tallow-notify: %s NOKEY\n", cfg.Primary.Addr())
		}
		if cfg.AllowTransfer {
			b.WriteString("\tprovide-xfr: 127.0.0.0/8 NOKEY\n\tprovide-xfr: ::1 NOKEY\n")
		}
		b.WriteString("\n")
	}
	return b.String()
}

// otherFamily is the IP version addr is not: the one NSD need not serve.
func otherFamily(addr netip.Addr) int {
	if addr.Is6() {
		return 4
	}
	return 6
}

// rateLimit is the server clause's lines about response rate limiting:
// none (NSD's defaults) unless cfg turns it off.
func rateLimit(cfg Config) string {
	if !cfg.NoRateLimit {
		return ""
	}
	return "\trrl-ratelimit: 0\n\trrl-whitelist-ratelimit: 0\n"
}
