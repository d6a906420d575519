package ufds

import (
	"bytes"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"sync"
	"time"

	"github.com/cnsd/cnsd/mockcloud"
	"github.com/cnsd/cnsd/subproc"
)

// Password is the root's password. The server is for tests and demos on
// loopback; it is not a secret.
const Password = "ufdstest"

// Server is one running slapd serving a cloud's accounts.
type Server struct {
	// URL is ldap://127.0.0.1:port, fixed for the life of the Server, so a
	// client keeps it across Stop and Restart.
	URL string

	dir  string
	conf string
	port int

	mu      sync.Mutex // guards cmd, done, applied
	cmd     *exec.Cmd
	done    chan struct{} // closed when cmd has exited
	applied int64         // the last change number mirrored
}

// Options say where a Server keeps its files and listens.
type Options struct {
	// Dir is an empty directory for slapd's configuration and databases;
	// it must exist.
	Dir string
	// Port is the port on 127.0.0.1; 0 picks a free one.
	Port int
}

// Start runs slapd loaded with c's accounts and changelog. A missing
// OpenLDAP program is an error naming the Debian packages to install.
func Start(c *mockcloud.Cloud, o Options) (*Server, error) {
	for _, prog := range []string{"slapd", "slapadd", "ldapmodify"} {
		if _, err := lookPath(prog); err != nil {
			return nil, fmt.Errorf("ufds: %s not found: install the Debian packages slapd and ldap-utils (scripts/testdeps.sh)", prog)
		}
	}
	s := &Server{dir: o.Dir}
	s.conf = filepath.Join(s.dir, "slapd.conf")
	if err := s.write(c); err != nil {
		return nil, fmt.Errorf("ufds: %w", err)
	}
	for try := 0; ; try++ {
		port := o.Port
		if port == 0 {
			var err error
			if port, err = freePort(); err != nil {
				return nil, fmt.Errorf("ufds: %w", err)
			}
		}
		s.port, s.URL = port, "ldap://127.0.0.1:"+strconv.Itoa(port)
		err := s.start()
		if err == nil {
			return s, nil
		}
		if o.Port != 0 || try == 2 {
			return nil, fmt.Errorf("ufds: %w", err)
		}
	}
}

// write lays out the directory and loads the databases offline.
func (s *Server) write(c *mockcloud.Cloud) error {
	files := map[string]string{"ufds.schema": schemaText, "slapd.conf": slapdConf(s.dir, Password)}
	for name, text := range files {
		if err := os.WriteFile(filepath.Join(s.dir, name), []byte(text), 0o600); err != nil {
			return err
		}
	}
	users := "dn: o=smartdc\nobjectclass: organization\no: smartdc\n\n" +
		"dn: " + UsersDN + "\nobjectclass: organizationalUnit\nou: users\n\n"
	for _, u := range c.Users() {
		users += userEntry(u) + "\n"
	}
	changes := "dn: " + ChangelogDN + "\nobjectclass: applicationProcess\ncn: changelog\n\n"
	for _, ch := range c.UserChanges(0) {
		changes += changeEntry(ch) + "\n"
		s.applied = ch.ChangeNumber
	}
	for i := range suffixes {
		if err := os.Mkdir(filepath.Join(s.dir, "db"+strconv.Itoa(i)), 0o700); err != nil {
			return err
		}
	}
	for i, ldif := range []string{users, changes, latestEntry(s.applied)} {
		if err := s.run("slapadd", ldif, "-q", "-f", s.conf, "-b", suffixes[i]); err != nil {
			return err
		}
	}
	return nil
}

// start runs slapd in the foreground (-d) and waits until it accepts
// connections or exits.
func (s *Server) start() error {
	path, _ := lookPath("slapd")
	cmd := exec.Command(path, "-d", "0", "-f", s.conf, "-h", s.URL+"/")
	cmd.SysProcAttr = subproc.Attr()
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("start slapd: %w", err)
	}
	done := make(chan struct{})
	var waitErr error
	go func() { waitErr = cmd.Wait(); close(done) }()
	for {
		select {
		case <-done:
			return fmt.Errorf("slapd exited before listening: %v: %s", waitErr, out.String())
		case <-time.After(20 * time.Millisecond):
		}
		if answersLDAP("127.0.0.1:" + strconv.Itoa(s.port)) {
			s.mu.Lock()
			s.cmd, s.done = cmd, done
			s.mu.Unlock()
			return nil
		}
	}
}

// anonymousBind is an LDAPv3 BindRequest, message 1, with an empty name
// and password (RFC 4511 §4.2) in BER.
var anonymousBind = []byte{0x30, 0x0c, 0x02, 0x01, 0x01, 0x60, 0x07, 0x02, 0x01, 0x03, 0x04, 0x00, 0x80, 0x00}

// answersLDAP says whether addr answers an anonymous bind with a
// successful BindResponse. Accepting a connection is not enough: when the
// port was taken by another server, slapd fails to bind it and exits, but
// a connect would still succeed, to the wrong server.
func answersLDAP(addr string) bool {
	conn, err := net.DialTimeout("tcp", addr, time.Second)
	if err != nil {
		return false
	}
	defer conn.Close()
	_ = conn.SetDeadline(time.Now().Add(time.Second))
	if _, err := conn.Write(anonymousBind); err != nil {
		return false
	}
	reply := make([]byte, 64)
	n, _ := io.ReadAtLeast(conn, reply, 2)
	return isBindSuccess(reply[:n])
}

// isBindSuccess reads an LDAPMessage just far enough to see a BindResponse
// to message 1 whose resultCode is success (0).
func isBindSuccess(b []byte) bool {
	next := func(tag byte) ([]byte, bool) {
		if len(b) < 2 || b[0] != tag {
			return nil, false
		}
		n, rest := int(b[1]), b[2:]
		if n&0x80 != 0 { // long form: n&0x7f bytes of length follow
			k := n & 0x7f
			if k == 0 || k > 2 || len(rest) < k {
				return nil, false
			}
			n = 0
			for _, c := range rest[:k] {
				n = n<<8 | int(c)
			}
			rest = rest[k:]
		}
		if len(rest) < n {
			return nil, false
		}
		b = rest[n:]
		return rest[:n], true
	}
	msg, ok := next(0x30)
	if !ok {
		return false
	}
	b = msg
	if id, ok := next(0x02); !ok || len(id) != 1 || id[0] != 1 {
		return false
	}
	resp, ok := next(0x61)
	if !ok {
		return false
	}
	b = resp
	code, ok := next(0x0a)
	return ok && len(code) == 1 && code[0] == 0
}

// Stop stops slapd and waits for it to exit; the data stays for Restart.
// Stopping a stopped Server does nothing.
func (s *Server) Stop() {
	s.mu.Lock()
	cmd, done := s.cmd, s.done
	s.cmd, s.done = nil, nil
	s.mu.Unlock()
	if cmd == nil {
		return
	}
	_ = cmd.Process.Signal(os.Interrupt)
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		// slapd waits for its threads; one stuck must not hang the test.
		_ = cmd.Process.Kill()
		<-done
	}
}

// Restart starts a stopped slapd again on the same URL, with its data.
func (s *Server) Restart() error {
	if err := s.start(); err != nil {
		return fmt.Errorf("ufds: restart: %w", err)
	}
	return nil
}

// run runs one of the OpenLDAP programs with stdin.
func (s *Server) run(prog, stdin string, args ...string) error {
	path, err := lookPath(prog)
	if err != nil {
		return err
	}
	cmd := exec.Command(path, args...)
	cmd.Stdin = bytes.NewBufferString(stdin)
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("%s: %w: %s", prog, err, out)
	}
	return nil
}

// lookPath finds an OpenLDAP program, also in /usr/sbin, which is not on
// every user's PATH.
func lookPath(prog string) (string, error) {
	if p, err := exec.LookPath(prog); err == nil {
		return p, nil
	}
	return exec.LookPath(filepath.Join("/usr/sbin", prog))
}

// freePort picks a port the kernel considers free; slapd binds it a moment
// later, and Start retries should another process win the race.
func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, fmt.Errorf("pick a port: %w", err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}
