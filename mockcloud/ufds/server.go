package ufds

import (
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"fmt"
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

	dir   string
	conf  string
	port  int
	nonce string // in the o=smartdc entry, to know this slapd from another

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
	nonce := make([]byte, 8)
	if _, err := rand.Read(nonce); err != nil {
		return nil, fmt.Errorf("ufds: %w", err)
	}
	s := &Server{dir: o.Dir, nonce: hex.EncodeToString(nonce)}
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
	files := map[string]string{"ufds.schema": schemaText + extraSchema(c.Users()), "slapd.conf": slapdConf(s.dir, Password)}
	for name, text := range files {
		if err := os.WriteFile(filepath.Join(s.dir, name), []byte(text), 0o600); err != nil {
			return err
		}
	}
	users := "dn: o=smartdc\nobjectclass: organization\no: smartdc\ndescription: mockcloud ufds " + s.nonce + "\n\n" +
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

// start runs slapd in the foreground and waits until it answers as
// itself or exits.
func (s *Server) start() error {
	path, _ := lookPath("slapd")
	// -d 32768 (level "none"): in the foreground, with only the lines
	// slapd always logs, such as why it could not bind its port.
	cmd := exec.Command(path, "-d", "32768", "-f", s.conf, "-h", s.URL+"/")
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
		if answersAsUs("127.0.0.1:"+strconv.Itoa(s.port), s.nonce) {
			s.mu.Lock()
			s.cmd, s.done = cmd, done
			s.mu.Unlock()
			return nil
		}
	}
}

// answersAsUs says whether the LDAP server at addr is the slapd started
// with this directory: its o=smartdc entry carries the Server's nonce.
// Accepting a connection is not enough, nor is answering LDAP: when the
// port was taken by another server (another test's slapd, or mockcloud's
// own HTTP APIs when both were given one port), slapd fails to bind it
// and exits, but a connect still succeeds, to the wrong server.
func answersAsUs(addr, nonce string) bool {
	conn, err := net.DialTimeout("tcp", addr, time.Second)
	if err != nil {
		return false
	}
	defer conn.Close()
	_ = conn.SetDeadline(time.Now().Add(time.Second))
	if _, err := conn.Write(searchOrganization); err != nil {
		return false
	}
	var reply []byte
	buf := make([]byte, 512)
	for !bytes.Contains(reply, []byte(nonce)) {
		n, err := conn.Read(buf)
		reply = append(reply, buf[:n]...)
		if err != nil || len(reply) > 1<<16 {
			return bytes.Contains(reply, []byte(nonce))
		}
	}
	return true
}

// searchOrganization is an LDAPv3 SearchRequest, message 1, anonymous (an
// LDAPv3 server needs no bind first): base o=smartdc, scope base, filter
// (objectClass=*), attribute description (RFC 4511 §4.5.1), in BER.
var searchOrganization = func() []byte {
	tlv := func(tag byte, parts ...[]byte) []byte {
		body := bytes.Join(parts, nil)
		return append([]byte{tag, byte(len(body))}, body...)
	}
	str := func(tag byte, s string) []byte { return tlv(tag, []byte(s)) }
	search := tlv(0x63,
		str(0x04, "o=smartdc"),
		[]byte{0x0a, 0x01, 0x00}, // scope baseObject
		[]byte{0x0a, 0x01, 0x00}, // neverDerefAliases
		[]byte{0x02, 0x01, 0x00}, // no size limit
		[]byte{0x02, 0x01, 0x00}, // no time limit
		[]byte{0x01, 0x01, 0x00}, // typesOnly false
		str(0x87, "objectClass"), // present filter
		tlv(0x30, str(0x04, "description")))
	return tlv(0x30, []byte{0x02, 0x01, 0x01}, search)
}()

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
