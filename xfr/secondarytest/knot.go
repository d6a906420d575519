package secondarytest

import (
	"fmt"
	"net/netip"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// StartKnot starts knotd as a secondary of cfg.Primary for cfg.Zones (and
// the members of cfg.Catalog), logging at info to stderr, which goes to
// the log file.
func StartKnot(t testing.TB, cfg Config) *Secondary {
	t.Helper()
	bin := binary(t, "knotd", "CNSD_KNOTD", "knot")
	conf := func(dir string, addr netip.AddrPort) string {
		for _, d := range []string{"db", "zones"} {
			if err := os.MkdirAll(filepath.Join(dir, d), 0o755); err != nil {
				t.Fatalf("secondarytest: %v", err)
			}
		}
		return knotConf(dir, addr, cfg)
	}
	return startConfigured(t, "knot", bin, "knot.conf", "knotd.log", cfg.listen(), conf, func(path string) []string {
		return []string{"-c", path}
	})
}

// knotConf is a knot.conf (Knot DNS 3.x) for a secondary listening on
// 127.0.0.1@port. Zones live only in its journal (journal-content:
// all), not in zone files, and survive a restart.
func knotConf(dir string, addr netip.AddrPort, cfg Config) string {
	var b strings.Builder
	fmt.Fprintf(&b, `server:
    rundir: %q
    listen: %s@%d
    udp-workers: 1
    tcp-workers: 1
    background-workers: 1
    identity: %q

log:
  - target: stderr
    any: info

database:
    storage: %q

`, dir, addr.Addr(), addr.Port(), identity(dir), filepath.Join(dir, "db"))
	keyRef := ""
	if cfg.TSIG != nil {
		fmt.Fprintf(&b, "key:\n  - id: %s\n    algorithm: %s\n    secret: %s\n\n",
			fqdn(cfg.TSIG.Name), cfg.TSIG.Algorithm, cfg.TSIG.Secret)
		keyRef = "\n    key: " + fqdn(cfg.TSIG.Name)
	}
	var addrs, hosts []string
	for _, p := range append([]netip.AddrPort{cfg.Primary}, cfg.MorePrimaries...) {
		addrs = append(addrs, fmt.Sprintf("%s@%d", p.Addr(), p.Port()))
		if h := p.Addr().String(); !slices.Contains(hosts, h) {
			hosts = append(hosts, h)
		}
	}
	fmt.Fprintf(&b, "remote:\n  - id: primary\n    address: [%s]%s\n\n", strings.Join(addrs, ", "), keyRef)
	// NOTIFY comes from the primaries' addresses but not their ports; it
	// may be signed or not.
	fmt.Fprintf(&b, "acl:\n  - id: notify\n    address: [%s]\n    action: notify\n", strings.Join(hosts, ", "))
	acls := "[notify"
	if cfg.TSIG != nil {
		fmt.Fprintf(&b, "  - id: notify-signed\n    address: [%s]\n    action: notify%s\n", strings.Join(hosts, ", "), keyRef)
		acls += ", notify-signed"
	}
	if cfg.AllowTransfer {
		b.WriteString("  - id: transfer\n    address: [127.0.0.0/8, ::1]\n    action: transfer\n")
		acls += ", transfer"
	}
	acls += "]"
	fmt.Fprintf(&b, `
template:
  - id: default
    storage: %q
    master: primary
    acl: %s
    zonefile-load: none
    zonefile-sync: -1
    journal-content: all
`, filepath.Join(dir, "zones"), acls)
	b.WriteString("\nzone:\n")
	if cfg.Catalog != "" {
		fmt.Fprintf(&b, "  - domain: %s\n    catalog-role: interpret\n    catalog-template: default\n", fqdn(cfg.Catalog))
	}
	for _, z := range cfg.Zones {
		fmt.Fprintf(&b, "  - domain: %s\n", fqdn(z))
	}
	return b.String()
}
