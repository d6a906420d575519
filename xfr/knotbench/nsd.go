package knotbench

import (
	"errors"
	"fmt"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
)

// NSDEnv names the variable that overrides where nsd is found.
const NSDEnv = "CNSD_NSD"

// ErrNoNSD is returned by FindNSD when nsd is not installed.
var ErrNoNSD = errors.New(`nsd not found on PATH or in /usr/sbin; install the Debian package "nsd" (or set ` + NSDEnv + `)`)

// FindNSD returns the path of nsd: $CNSD_NSD, else PATH, else /usr/sbin.
func FindNSD() (string, error) { return findServer("nsd", NSDEnv, ErrNoNSD) }

// NSDVersion returns the first line of `nsd -v`.
func NSDVersion(bin string) string {
	out, _ := exec.Command(bin, "-v").CombinedOutput()
	line, _, _ := strings.Cut(string(out), "\n")
	return line
}

// nsdConf serves Zone from zonefile on 127.0.0.1@port with one server
// process per CPU (as Knot runs a worker per CPU; NSD's default is
// one), response rate limiting off (Debian builds NSD with it, at 200
// answers a second per client prefix, which would drop most of a load
// test's answers), transfers allowed from loopback, and everything kept
// in dir.
func nsdConf(dir, zonefile string, port int) string {
	return fmt.Sprintf(`server:
	ip-address: 127.0.0.1@%[2]d
	port: %[2]d
	do-ip6: no
	server-count: %[3]d
	verbosity: 0
	username: ""
	chroot: ""
	zonesdir: %[1]q
	database: ""
	zonelistfile: %[4]q
	xfrdfile: %[5]q
	xfrdir: %[1]q
	pidfile: %[6]q
	rrl-ratelimit: 0
	rrl-whitelist-ratelimit: 0

remote-control:
	control-enable: no

zone:
	name: %[7]q
	zonefile: %[8]q
	provide-xfr: 127.0.0.0/8 NOKEY
`, dir, port, runtime.NumCPU(), filepath.Join(dir, "nsd-zone.list"), filepath.Join(dir, "xfrd.state"),
		filepath.Join(dir, "nsd.pid"), strings.TrimSuffix(Zone, "."), zonefile)
}

// StartNSD starts nsd in the foreground serving Zone from zonefile, with
// its configuration and state in dir, and waits until it answers the
// zone's SOA. A port taken between choosing and binding it makes it
// retry with another.
func StartNSD(bin, dir, zonefile string) (*Server, error) {
	return startServer(serverRun{name: "nsd", log: "nsd.log", conf: "nsd.conf",
		text: func(port int) string { return nsdConf(dir, zonefile, port) },
		args: func(conf string) []string { return []string{"-d", "-c", conf} }}, bin, dir)
}
