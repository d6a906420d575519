package secondarytest

import (
	"net/netip"
	"testing"
)

// Site is where the harness runs a secondary whose configuration a test
// writes whole (StartFrom). The configuration must make the server
// listen on Addr only, keep every file it writes under Dir, and answer
// id.server CH TXT with Identity: that is how the harness tells the
// server it started from another process that took the port first.
type Site struct {
	Dir      string
	Addr     netip.AddrPort
	Identity string
}

// StartFrom starts a secondary of kind "bind", "knot" or "nsd" with the
// configuration conf writes for site — an operator's file (one shipped
// in deploy/, the output of cnsadm bind-config) with its addresses,
// directories and keys replaced — instead of one the harness writes.
// The process runs as StartBIND, StartKnot and StartNSD run theirs: in
// the foreground, with one worker where a flag sets it, its stderr going
// to the log file. conf is called again at each launch (a retry on
// another port, Restart).
func StartFrom(t testing.TB, kind string, listen netip.Addr, conf func(Site) string) *Secondary {
	t.Helper()
	if !listen.IsValid() {
		listen = Config{}.listen()
	}
	var bin, confName, logName string
	var args func(path string) []string
	switch kind {
	case "bind":
		bin, confName, logName = binary(t, "named", "CNSD_NAMED", "bind9"), "named.conf", "named.log"
		family := "-4"
		if listen.Is6() {
			family = "-6"
		}
		args = func(path string) []string { return []string{"-g", family, "-n", "1", "-d", "3", "-c", path} }
	case "knot":
		bin, confName, logName = binary(t, "knotd", "CNSD_KNOTD", "knot"), "knot.conf", "knotd.log"
		args = func(path string) []string { return []string{"-c", path} }
	case "nsd":
		bin, confName, logName = binary(t, "nsd", "CNSD_NSD", "nsd"), "nsd.conf", "nsd.log"
		args = func(path string) []string { return []string{"-d", "-c", path} }
	default:
		t.Fatalf("secondarytest: StartFrom: unknown kind %q (bind, knot or nsd)", kind)
	}
	write := func(dir string, addr netip.AddrPort) string {
		return conf(Site{Dir: dir, Addr: addr, Identity: identity(dir)})
	}
	return startConfigured(t, kind, bin, confName, logName, listen, write, args)
}
