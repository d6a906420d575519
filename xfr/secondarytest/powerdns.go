package secondarytest

import (
	"fmt"
	"net/netip"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// StartPowerDNS starts the PowerDNS Authoritative Server (pdns_server) as
// a secondary of cfg.Primary for cfg.Zones (and the members of
// cfg.Catalog, which it consumes), with its zones in an SQLite database
// (the gsqlite3 backend) and its log on stderr, which goes to the log
// file. The database is made once, with sqlite3 and pdnsutil, and kept
// across restarts.
func StartPowerDNS(t testing.TB, cfg Config) *Secondary {
	t.Helper()
	bin := binary(t, "pdns_server", "CNSD_PDNS_SERVER", "pdns-server")
	pdnsutil := binary(t, "pdnsutil", "CNSD_PDNSUTIL", "pdns-server")
	sqlite := binary(t, "sqlite3", "CNSD_SQLITE3", "sqlite3")
	schema := pdnsSchema(t)
	conf := func(dir string, addr netip.AddrPort) string {
		text := pdnsConf(dir, addr)
		if _, err := os.Stat(filepath.Join(dir, "pdns.db")); err == nil {
			return text // made at the first start
		}
		if err := os.WriteFile(filepath.Join(dir, "pdns.conf"), []byte(text), 0o644); err != nil {
			t.Fatalf("secondarytest: %v", err)
		}
		run := func(name string, args ...string) {
			cmd := exec.Command(name, args...)
			cmd.Dir = dir
			if out, err := cmd.CombinedOutput(); err != nil {
				t.Fatalf("secondarytest: %s %s: %v\n%s", name, strings.Join(args, " "), err, out)
			}
		}
		run(sqlite, "-init", schema, filepath.Join(dir, "pdns.db"), ".quit")
		util := func(args ...string) { run(pdnsutil, append([]string{"--config-dir=" + dir}, args...)...) }
		if cfg.TSIG != nil {
			util("import-tsig-key", bare(fqdn(cfg.TSIG.Name)), cfg.TSIG.Algorithm, cfg.TSIG.Secret)
		}
		primary := cfg.Primary.String()
		zone := func(z string, ixfr bool) {
			util("create-secondary-zone", bare(fqdn(z)), primary)
			if ixfr {
				// PowerDNS asks for IXFR only where this is set.
				util("set-meta", bare(fqdn(z)), "IXFR", "1")
			}
			if cfg.TSIG != nil {
				util("set-meta", bare(fqdn(z)), "AXFR-MASTER-TSIG", bare(fqdn(cfg.TSIG.Name)))
			}
		}
		if cfg.Catalog != "" {
			// PowerDNS 4.7 cannot apply an IXFR to a consumer zone ("can't
			// determine backend, not configured as slave"): AXFR only.
			zone(cfg.Catalog, false)
			util("set-kind", bare(fqdn(cfg.Catalog)), "consumer")
		}
		for _, z := range cfg.Zones {
			zone(z, true)
		}
		return text
	}
	return startConfigured(t, "powerdns", bin, "pdns.conf", "pdns.log", cfg.listen(), conf, func(path string) []string {
		return []string{"--config-dir=" + filepath.Dir(path)}
	})
}

// pdnsSchema is the gsqlite3 backend's schema as Debian ships it (not
// under /usr/share/doc, which minimal images leave out).
func pdnsSchema(t testing.TB) string {
	t.Helper()
	const path = "/usr/share/pdns-backend-sqlite3/schema/schema.sqlite3.sql"
	if p := os.Getenv("CNSD_PDNS_SCHEMA"); p != "" {
		return p
	}
	if _, err := os.Stat(path); err != nil {
		missing(t, fmt.Sprintf("secondarytest: %s not found; install the Debian package \"pdns-backend-sqlite3\" (or set CNSD_PDNS_SCHEMA)", path))
	}
	return path
}

// pdnsConf is a pdns.conf (PowerDNS Authoritative 4.7) for a secondary
// listening on addr. Every cache is off, so that an answer follows a
// transfer at once; secpoll is off (no network); NOTIFY is accepted from
// loopback, where the primary is.
func pdnsConf(dir string, addr netip.AddrPort) string {
	return fmt.Sprintf(`launch=gsqlite3
gsqlite3-database=%[1]s/pdns.db
secondary=yes
local-address=%[2]s
socket-dir=%[1]s
guardian=no
daemon=no
disable-syslog=yes
write-pid=no
loglevel=6
allow-notify-from=127.0.0.0/8, ::1/128
security-poll-suffix=
cache-ttl=0
negquery-cache-ttl=0
query-cache-ttl=0
consistent-backends=yes
zone-cache-refresh-interval=0
xfr-cycle-interval=1
receiver-threads=1
distributor-threads=1
retrieval-threads=1
server-id=%[3]s
`, dir, addr, identity(dir))
}
