package secondarytest

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"net"
	"net/netip"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/miekg/dns"

	"github.com/cnsd/cnsd/subproc"
)

// Config is what a secondary serves and where from.
type Config struct {
	// Primary is the address the secondary transfers from and accepts
	// NOTIFY from.
	Primary netip.AddrPort
	// MorePrimaries are further primaries of every zone, asked after
	// Primary (BIND and Knot; the others ignore them): a secondary of
	// several cnsd sharing one store.
	MorePrimaries []netip.AddrPort
	// Zones are the zones to serve as a secondary, with or without the
	// trailing dot.
	Zones []string
	// Catalog, when set, is a catalog zone (RFC 9432) to transfer from
	// Primary; the secondary serves every member zone it lists, also
	// from Primary.
	Catalog string
	// TSIG, when set, signs every transfer and SOA query to Primary.
	TSIG *Key
	// Listen is the loopback address the secondary listens on:
	// 127.0.0.1 when unset, or ::1.
	Listen netip.Addr
	// AllowTransfer lets loopback (127.0.0.0/8 and ::1) transfer the
	// zones from the secondary, unsigned: a test compares what it
	// serves with what the primary serves.
	AllowTransfer bool
	// NoRateLimit turns off response rate limiting where the server has
	// it on by default (NSD built with --enable-ratelimit, as Debian's
	// is: 200 answers a second per /24): for tests that send many
	// queries.
	NoRateLimit bool
	// SerialQueryRate is BIND's serial-query-rate: how many SOA queries
	// a second it sends to primaries, for all its zones together, the
	// one a NOTIFY starts among them. 0 means 1000, so that a test that
	// changes many zones at once is not held up by the secondary;
	// StockSerialQueryRate leaves the option out, for BIND's own default
	// (20). Other secondaries ignore it.
	SerialQueryRate int
}

// StockSerialQueryRate, as Config.SerialQueryRate, gives BIND its stock
// serial-query-rate: the one a benchmark compares the tuned value with.
const StockSerialQueryRate = -1

// listen is where the secondary listens.
func (c Config) listen() netip.Addr {
	if c.Listen.IsValid() {
		return c.Listen
	}
	return netip.AddrFrom4([4]byte{127, 0, 0, 1})
}

// Key is a TSIG key.
type Key struct {
	Name      string // without the trailing dot
	Algorithm string // hmac-sha256 and the like
	Secret    string // standard base64
}

// Secondary is one running secondary.
type Secondary struct {
	kind   string // "bind", "knot", "nsd" or "powerdns"
	dir    string
	addr   netip.AddrPort
	log    string // the file its log lines go to
	cmd    *exec.Cmd
	launch launcher
	done   chan struct{} // closed when the process has exited
	err    error         // the process's exit status, set before done closes
}

// startTimeout bounds how long a secondary may take to answer its first
// query.
const startTimeout = 20 * time.Second

// Addr is the address the secondary answers on, UDP and TCP.
func (s *Secondary) Addr() netip.AddrPort { return s.addr }

// Kind is "bind", "knot", "nsd" or "powerdns".
func (s *Secondary) Kind() string { return s.kind }

// Dir is the secondary's working directory.
func (s *Secondary) Dir() string { return s.dir }

// Log returns everything the secondary has logged so far.
func (s *Secondary) Log() string {
	b, err := os.ReadFile(s.log)
	if err != nil {
		return fmt.Sprintf("(reading %s: %v)", s.log, err)
	}
	return string(b)
}

// logTail is the end of the log, for failure messages, without BIND's
// debug lines about each query (the harness's polling would fill it) and
// its timer chatter.
func (s *Secondary) logTail() string {
	var lines []string
	for line := range strings.Lines(s.Log()) {
		if !strings.Contains(line, "client @") && !strings.Contains(line, ": enter\n") {
			lines = append(lines, line)
		}
	}
	if len(lines) > 80 {
		lines = append([]string{"…\n"}, lines[len(lines)-80:]...)
	}
	return strings.Join(lines, "")
}

// logAbout is the end of what the log says about the zones that may
// hold name: the lines naming one of its ancestors of three labels or
// more. A busy log's tail may no longer reach back to the transfer that
// went wrong.
func (s *Secondary) logAbout(name string) string {
	labels := dns.SplitDomainName(name)
	var ancestors []string
	for i := 0; i+3 <= len(labels); i++ {
		ancestors = append(ancestors, strings.Join(labels[i:], "."))
	}
	var lines []string
	for line := range strings.Lines(s.Log()) {
		if strings.Contains(line, "client @") {
			continue // the harness's own queries
		}
		for _, a := range ancestors {
			if strings.Contains(line, a) {
				lines = append(lines, line)
				break
			}
		}
	}
	if len(lines) > 60 {
		lines = append([]string{"…\n"}, lines[len(lines)-60:]...)
	}
	return strings.Join(lines, "")
}

// binary finds a secondary's program: env overrides, then PATH, then
// /usr/sbin (not on a normal user's PATH). When it is missing the test is
// skipped, or fails when CNSD_REQUIRE_SECONDARIES is set.
func binary(t testing.TB, name, env, pkg string) string {
	t.Helper()
	if p := os.Getenv(env); p != "" {
		return p
	}
	if p, err := exec.LookPath(name); err == nil {
		return p
	}
	p := filepath.Join("/usr/sbin", name)
	if _, err := os.Stat(p); err == nil {
		return p
	}
	missing(t, fmt.Sprintf("secondarytest: %s not found on PATH or in /usr/sbin; install the Debian package %q (or set %s)", name, pkg, env))
	return ""
}

// missing skips the test for want of something a secondary needs, or
// fails it when CNSD_REQUIRE_SECONDARIES is set.
func missing(t testing.TB, msg string) {
	t.Helper()
	if os.Getenv("CNSD_REQUIRE_SECONDARIES") != "" {
		t.Fatal(msg)
	}
	t.Skip(msg + "; set CNSD_REQUIRE_SECONDARIES=1 to make this a failure")
}

// freePort returns a port of host that is free for both UDP and TCP at
// the moment; the child binds it a little later, so start retries with
// another port when that race is lost.
func freePort(host netip.Addr) (uint16, error) {
	for range 20 {
		l, err := net.Listen("tcp", netip.AddrPortFrom(host, 0).String())
		if err != nil {
			return 0, err
		}
		port := l.Addr().(*net.TCPAddr).Port
		pc, err := net.ListenPacket("udp", netip.AddrPortFrom(host, uint16(port)).String())
		l.Close()
		if err != nil {
			continue
		}
		pc.Close()
		return uint16(port), nil
	}
	return 0, fmt.Errorf("no port free for both udp and tcp on %s", host)
}

// launcher writes a secondary's configuration for the address it listens
// on and returns the command that runs it.
type launcher func(addr netip.AddrPort) *exec.Cmd

// startConfigured starts bin as a secondary of the given kind in a new
// directory: before each launch, conf(dir, port) is written to confName
// there and the process runs with args(path of that file), logging to
// logName in the directory.
func startConfigured(t testing.TB, kind, bin, confName, logName string, listen netip.Addr, conf func(dir string, addr netip.AddrPort) string, args func(confPath string) []string) *Secondary {
	t.Helper()
	dir := t.TempDir()
	return start(t, kind, dir, filepath.Join(dir, logName), listen, func(addr netip.AddrPort) *exec.Cmd {
		path := filepath.Join(dir, confName)
		if err := os.WriteFile(path, []byte(conf(dir, addr)), 0o644); err != nil {
			t.Fatalf("secondarytest: %v", err)
		}
		return exec.Command(bin, args(path)...)
	})
}

// start runs the secondary launch makes until it answers queries,
// retrying with a new port when the process dies before that (another
// process may have taken the port). Cleanup stops it.
func start(t testing.TB, kind, dir, logPath string, listen netip.Addr, launch launcher) *Secondary {
	t.Helper()
	for attempt := 0; ; attempt++ {
		port, err := freePort(listen)
		if err != nil {
			t.Fatalf("secondarytest: %v", err)
		}
		s := &Secondary{kind: kind, dir: dir, log: logPath, launch: launch,
			addr: netip.AddrPortFrom(listen, port)}
		if err := s.run(os.O_TRUNC); err != nil {
			t.Fatalf("secondarytest: start %s: %v", kind, err)
		}
		t.Cleanup(s.stop)
		err = s.waitReady()
		if err == nil {
			return s
		}
		if attempt == 2 {
			t.Fatalf("secondarytest: %s did not come up: %v\nlog:\n%s", kind, err, s.logTail())
		}
		t.Logf("secondarytest: %s on port %d did not come up (%v); retrying\nlog:\n%s", kind, port, err, s.logTail())
		s.stop()
	}
}

// run starts the secondary on its port with its output going to the
// log file, opened with the extra flag (truncate or append).
func (s *Secondary) run(flag int) error {
	f, err := os.OpenFile(s.log, os.O_CREATE|os.O_WRONLY|flag, 0o644)
	if err != nil {
		return err
	}
	cmd := s.launch(s.addr)
	s.done = make(chan struct{})
	defer f.Close()
	cmd.Dir, cmd.Stdout, cmd.Stderr = s.dir, f, f
	cmd.SysProcAttr = subproc.Attr()
	if err := cmd.Start(); err != nil {
		s.err = err
		close(s.done)
		return err
	}
	s.cmd = cmd
	done := s.done
	go func() {
		s.err = cmd.Wait()
		close(done)
	}()
	return nil
}

// Restart stops the secondary and starts it again on the same port and
// directory, keeping the zones it has stored, and waits until it answers.
// Its log goes on in the same file.
func (s *Secondary) Restart(t testing.TB) {
	t.Helper()
	s.stop()
	if err := s.run(os.O_APPEND); err != nil {
		t.Fatalf("secondarytest: restart %s: %v", s.kind, err)
	}
	if err := s.waitReady(); err != nil {
		t.Fatalf("secondarytest: %s did not come up again on %s: %v\nlog:\n%s", s.kind, s.addr, err, s.logTail())
	}
}

// waitReady waits until the secondary answers id.server with its own
// identity.
func (s *Secondary) waitReady() error {
	deadline := time.Now().Add(startTimeout)
	for time.Now().Before(deadline) {
		select {
		case <-s.done:
			return fmt.Errorf("exited: %v", s.err)
		default:
		}
		id, err := serverID(s.addr.String(), 200*time.Millisecond)
		if err == nil && id == identity(s.dir) {
			return nil
		}
		time.Sleep(50 * time.Millisecond)
	}
	return fmt.Errorf("no answer within %v", startTimeout)
}

// identity is the server id a secondary in dir is configured to give for
// id.server CH TXT: something answering on its port is only this
// secondary if it gives this id, not another process that took the port
// first (the secondary then fails to bind and exits, but a query sent
// before that would be answered).
func identity(dir string) string {
	sum := sha256.Sum256([]byte(dir))
	return "secondarytest-" + hex.EncodeToString(sum[:8])
}

// serverID asks addr for id.server CH TXT (RFC 4892) and returns the text.
func serverID(addr string, timeout time.Duration) (string, error) {
	m := new(dns.Msg)
	m.SetQuestion("id.server.", dns.TypeTXT)
	m.Question[0].Qclass = dns.ClassCHAOS
	m.RecursionDesired = false
	r, _, err := (&dns.Client{Net: "udp", Timeout: timeout}).Exchange(m, addr)
	if err != nil {
		return "", err
	}
	for _, rr := range r.Answer {
		if txt, ok := rr.(*dns.TXT); ok {
			return strings.Join(txt.Txt, ""), nil
		}
	}
	return "", fmt.Errorf("id.server CH TXT at %s: no TXT in the answer (rcode %s)", addr, dns.RcodeToString[r.Rcode])
}

// stop terminates the process and waits for it; it is idempotent.
func (s *Secondary) stop() {
	select {
	case <-s.done:
		return
	default:
	}
	_ = s.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-s.done:
	case <-time.After(10 * time.Second):
		_ = s.cmd.Process.Kill()
		<-s.done
	}
}

// Stop stops the secondary now rather than at the end of the test.
func (s *Secondary) Stop() { s.stop() }

// WaitSaved waits until the secondary has its copy of zone on disk, so
// that a restart finds it. BIND writes a transferred zone to its file a
// moment after the transfer, and on SIGTERM it does not write what it has
// not yet written; the others keep their copy as they go.
func (s *Secondary) WaitSaved(t testing.TB, zone string) {
	t.Helper()
	if s.kind != "bind" {
		return
	}
	file := filepath.Join(s.dir, bare(fqdn(zone))+".db")
	deadline := time.Now().Add(startTimeout)
	for {
		if _, err := os.Stat(file); err == nil {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("secondarytest: bind has not written %s within %v\nlog:\n%s", file, startTimeout, s.logTail())
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// fqdn lower-cases name and gives it a trailing dot.
func fqdn(name string) string {
	name = strings.ToLower(name)
	if !strings.HasSuffix(name, ".") {
		name += "."
	}
	return name
}

// bare is name without the trailing dot (but "." for the root).
func bare(name string) string {
	if name == "." {
		return name
	}
	return strings.TrimSuffix(name, ".")
}
