package knotbench

import (
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/miekg/dns"
)

// KnotdEnv names the variable that overrides where knotd is found.
const KnotdEnv = "CNSD_KNOTD"

// ErrNoKnotd is returned by FindKnotd when knotd is not installed.
var ErrNoKnotd = errors.New(`knotd not found on PATH or in /usr/sbin; install the Debian package "knot" (or set ` + KnotdEnv + `)`)

// FindKnotd returns the path of knotd: $CNSD_KNOTD, else PATH, else
// /usr/sbin (not on a normal user's PATH).
func FindKnotd() (string, error) { return findServer("knotd", KnotdEnv, ErrNoKnotd) }

// findServer returns the path of the program name: the one the variable
// env names, else name on PATH, else /usr/sbin/name; notFound when none.
func findServer(name, env string, notFound error) (string, error) {
	if p := os.Getenv(env); p != "" {
		if _, err := os.Stat(p); err != nil {
			return "", fmt.Errorf("%w (%s=%s: %v)", notFound, env, p, err)
		}
		return p, nil
	}
	if p, err := exec.LookPath(name); err == nil {
		return p, nil
	}
	if _, err := os.Stat("/usr/sbin/" + name); err == nil {
		return "/usr/sbin/" + name, nil
	}
	return "", notFound
}

// KnotdVersion returns the first line of `knotd --version`.
func KnotdVersion(bin string) string {
	out, err := exec.Command(bin, "--version").Output()
	if err != nil {
		return "unknown (" + err.Error() + ")"
	}
	line, _, _ := strings.Cut(string(out), "\n")
	return line
}

// knotConf serves Zone from zonefile on 127.0.0.1@port with Knot's
// default worker counts (one UDP and one TCP worker per CPU), transfers
// allowed from loopback, a control socket in dir for knotc (Change),
// and the journal keeping changes only, which IXFR serves; the zone file
// is never written back.
func knotConf(dir, zonefile string, port int) string {
	return fmt.Sprintf(`server:
    rundir: %q
    listen: 127.0.0.1@%d

control:
    listen: %q

log:
  - target: stderr
    any: warning

database:
    storage: %q

acl:
  - id: loopback
    address: 127.0.0.0/8
    action: transfer

zone:
  - domain: %s
    file: %q
    acl: loopback
    zonefile-sync: -1
    zonefile-load: whole
    journal-content: changes
`, dir, port, filepath.Join(dir, "knot.sock"), filepath.Join(dir, "db"), Zone, zonefile)
}

// StartKnot starts knotd serving Zone from zonefile, with its
// configuration, database and log in dir, and waits until it answers
// the zone's SOA (loading a zone of 1M records takes a while). A port
// taken between choosing and binding it makes it retry with another.
func StartKnot(bin, dir, zonefile string) (*Server, error) {
	// Knot does not make its storage directory, where the journal goes.
	if err := os.MkdirAll(filepath.Join(dir, "db"), 0o755); err != nil {
		return nil, fmt.Errorf("start knot: %w", err)
	}
	s, err := startServer(serverRun{name: "knot", log: "knotd.log", conf: "knot.conf",
		text: func(port int) string { return knotConf(dir, zonefile, port) },
		args: func(conf string) []string { return []string{"-c", conf} }}, bin, dir)
	if err != nil {
		return nil, err
	}
	s.knotc = []string{filepath.Join(filepath.Dir(bin), "knotc"), "-s", filepath.Join(dir, "knot.sock")}
	return s, nil
}

// serverRun is how one kind of reference server is configured and run.
type serverRun struct {
	name, log, conf string                     // server name, log and configuration file names
	text            func(port int) string      // the configuration for a port
	args            func(conf string) []string // the command line, given the configuration's path
}

// startServer starts the server r describes with its files in dir, on a
// free port, and waits until it answers Zone's SOA; a port taken between
// choosing and binding it makes it try again with another.
func startServer(r serverRun, bin, dir string) (*Server, error) {
	var err error
	for range 3 {
		var s *Server
		if s, err = startServerOnce(r, bin, dir); err == nil {
			return s, nil
		}
	}
	return nil, err
}

func startServerOnce(r serverRun, bin, dir string) (*Server, error) {
	port, err := freePort()
	if err != nil {
		return nil, err
	}
	conf := filepath.Join(dir, r.conf)
	if err := os.WriteFile(conf, []byte(r.text(port)), 0o644); err != nil {
		return nil, err
	}
	logf, err := os.Create(filepath.Join(dir, r.log))
	if err != nil {
		return nil, err
	}
	defer logf.Close()
	addr := net.JoinHostPort("127.0.0.1", strconv.Itoa(port))
	s := &Server{Name: r.name, UDP: addr, TCP: addr}
	cmd := exec.Command(bin, r.args(conf)...)
	cmd.Dir, cmd.Stdout, cmd.Stderr = dir, logf, logf
	if err := s.start(cmd); err != nil {
		return nil, err
	}
	if err := waitZone(s, 10*time.Minute); err != nil {
		s.Stop()
		log, _ := os.ReadFile(logf.Name())
		return nil, fmt.Errorf("start %s: %w\n%s:\n%s", r.name, err, r.log, log)
	}
	return s, nil
}

// waitZone waits until s answers the SOA of Zone authoritatively.
func waitZone(s *Server, timeout time.Duration) error {
	c := &dns.Client{Timeout: 200 * time.Millisecond}
	q := new(dns.Msg).SetQuestion(Zone, dns.TypeSOA)
	for deadline := time.Now().Add(timeout); time.Now().Before(deadline); {
		if done, err := s.exited(); done {
			return fmt.Errorf("%s exited: %v", s.Name, err)
		}
		r, _, err := c.Exchange(q, s.UDP)
		if err == nil && r.Rcode == dns.RcodeSuccess && len(r.Answer) == 1 {
			return nil
		}
		time.Sleep(100 * time.Millisecond)
	}
	return fmt.Errorf("%s did not serve %s within %v", s.Name, Zone, timeout)
}

// freePort returns a port on 127.0.0.1 free for both UDP and TCP at the
// moment; knotd binds it a little later, hence the retries above.
func freePort() (int, error) {
	for range 20 {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return 0, err
		}
		port := l.Addr().(*net.TCPAddr).Port
		pc, err := net.ListenPacket("udp", net.JoinHostPort("127.0.0.1", strconv.Itoa(port)))
		l.Close()
		if err != nil {
			continue
		}
		pc.Close()
		return port, nil
	}
	return 0, errors.New("no port free for both udp and tcp on 127.0.0.1")
}
