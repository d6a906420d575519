// Package redistest starts real redis-server processes for tests.
//
// Each server listens on 127.0.0.1 only, keeps its data in the test's
// temporary directory and writes an append-only file synced on every write,
// so that Kill (SIGKILL) followed by Restart loses nothing the server
// acknowledged. It imports only the standard library.
package redistest

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/cnsd/cnsd/subproc"
)

// Package is the Debian package that provides redis-server; a test that
// cannot find the binary names it so CI can install it.
const Package = "redis-server"

// startTimeout bounds how long a server may take to answer PING, including
// replaying its append-only file after Restart.
const startTimeout = 30 * time.Second

// Option changes how Start runs the server.
type Option func(*config)

type config struct {
	args     []string
	sentinel string // the text of a Sentinel's configuration file
	dir      string // the data directory, when not a temporary one
}

// InDir keeps the server's data (its append-only file) in dir instead
// of a temporary directory: a file system a test fills up, say. The log
// stays in a temporary directory.
func InDir(dir string) Option {
	return func(c *config) { c.dir = dir }
}

// WithArgs appends redis-server command-line settings, such as
// "--maxmemory", "1gb"; later settings override the defaults.
func WithArgs(args ...string) Option {
	return func(c *config) { c.args = append(c.args, args...) }
}

// Server is one redis-server process owned by a test.
type Server struct {
	t    testing.TB
	bin  string
	dir  string
	logs string // the directory of redis.log
	port int
	args []string
	// sentinelConf, when set, runs the process as a Sentinel with this
	// configuration file (Sentinel rewrites it, so each has its own).
	sentinelConf string

	mu   sync.Mutex // guards proc
	proc *process
}

// process is one run of redis-server; done is closed when it has exited.
type process struct {
	cmd  *exec.Cmd
	done chan struct{}
}

// Start runs redis-server for the rest of the test and stops it in
// t.Cleanup. It fails the test, never skips it, when redis-server is not
// installed.
func Start(t testing.TB, opts ...Option) *Server {
	t.Helper()
	bin, err := exec.LookPath("redis-server")
	if err != nil {
		t.Fatalf("redistest: redis-server not found on PATH; install the Debian package %q: %v", Package, err)
	}
	var c config
	for _, o := range opts {
		o(&c)
	}
	s := &Server{t: t, bin: bin, dir: c.dir, logs: t.TempDir(), args: c.args}
	if s.dir == "" {
		s.dir = s.logs
	}
	if c.sentinel != "" {
		s.sentinelConf = filepath.Join(s.dir, "sentinel.conf")
		if err := os.WriteFile(s.sentinelConf, []byte(c.sentinel), 0o600); err != nil {
			t.Fatalf("redistest: %v", err)
		}
	}
	t.Cleanup(s.stop)
	// Another process may take the port between freePort and the
	// server's bind, so a failed start is tried again on a new port.
	for range 3 {
		if s.port, err = freePort(); err != nil {
			break
		}
		if err = s.start(); err == nil {
			return s
		}
	}
	t.Fatalf("redistest: %v", err)
	return nil
}

// Addr returns the server's host:port.
func (s *Server) Addr() string { return net.JoinHostPort("127.0.0.1", strconv.Itoa(s.port)) }

// URL returns a redis:// URL for the server.
func (s *Server) URL() string { return "redis://" + s.Addr() }

// PID returns the process ID of the running redis-server, or 0 when it
// is not running.
func (s *Server) PID() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.proc == nil || s.proc.cmd.Process == nil {
		return 0
	}
	select {
	case <-s.proc.done:
		return 0
	default:
		return s.proc.cmd.Process.Pid
	}
}

// Port returns the server's TCP port.
func (s *Server) Port() int { return s.port }

// Dir returns the server's data directory.
func (s *Server) Dir() string { return s.dir }

// Kill ends the server with SIGKILL, as a crash would, and waits for it
// to exit.
func (s *Server) Kill() {
	s.t.Helper()
	s.mu.Lock()
	p := s.proc
	s.proc = nil
	s.mu.Unlock()
	if p == nil {
		return
	}
	_ = p.cmd.Process.Kill() // already exited is fine
	<-p.done
}

// Pause stops the server with SIGSTOP: it keeps its connections but
// answers nothing, as a hung or partitioned server would, until Resume.
func (s *Server) Pause() { s.signal(syscall.SIGSTOP) }

// Resume continues a server Pause stopped.
func (s *Server) Resume() { s.signal(syscall.SIGCONT) }

func (s *Server) signal(sig syscall.Signal) {
	s.t.Helper()
	s.mu.Lock()
	p := s.proc
	s.mu.Unlock()
	if p == nil {
		s.t.Fatalf("redistest: signal %v: the server on port %d is not running", sig, s.port)
	}
	if err := p.cmd.Process.Signal(sig); err != nil {
		s.t.Fatalf("redistest: signal %v to the server on port %d: %v", sig, s.port, err)
	}
}

// Restart kills the server if it runs and starts it again on the same port
// and directory, so it replays its append-only file.
func (s *Server) Restart() {
	s.t.Helper()
	s.Kill()
	if err := s.start(); err != nil {
		s.t.Fatalf("redistest: restart: %v", err)
	}
}

// Running says whether the server's process runs: it has been started
// and neither killed nor exited on its own (as redis-server does when it
// cannot write its append-only file with appendfsync always).
func (s *Server) Running() bool {
	s.mu.Lock()
	p := s.proc
	s.mu.Unlock()
	if p == nil {
		return false
	}
	select {
	case <-p.done:
		return false
	default:
		return true
	}
}

// TryRestart is Restart for a test's supervising goroutine: it returns
// the error instead of failing the test (a server that cannot start now,
// on a full disk say, may start later).
func (s *Server) TryRestart() error {
	s.Kill()
	return s.start()
}

func (s *Server) stop() { s.Kill() }

func (s *Server) start() error {
	args := []string{
		"--bind", "127.0.0.1",
		"--port", strconv.Itoa(s.port),
		"--dir", s.dir,
		"--logfile", filepath.Join(s.logs, logName),
		"--daemonize", "no",
	}
	if s.sentinelConf != "" {
		// A Sentinel keeps no data; it must read its file first.
		args = append([]string{s.sentinelConf, "--sentinel"}, args...)
	} else {
		args = append(args, "--save", "", "--appendonly", "yes", "--appendfsync", "always")
	}
	cmd := exec.Command(s.bin, append(args, s.args...)...)
	cmd.Dir = s.dir
	cmd.SysProcAttr = subproc.Attr()
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("start %s: %w", s.bin, err)
	}
	p := &process{cmd: cmd, done: make(chan struct{})}
	go func() {
		_ = cmd.Wait() // the exit status of a killed server is expected
		close(p.done)
	}()
	s.mu.Lock()
	s.proc = p
	s.mu.Unlock()
	if err := s.waitReady(p); err != nil {
		s.Kill()
		return fmt.Errorf("redis-server on port %d: %w\n%s", s.port, err, s.logTail())
	}
	return nil
}

// waitReady polls with PING until the server answers PONG; while it loads
// its append-only file it answers LOADING instead.
func (s *Server) waitReady(p *process) error {
	deadline := time.Now().Add(startTimeout)
	var last error
	for time.Now().Before(deadline) {
		select {
		case <-p.done:
			return errors.New("exited before answering PING")
		default:
		}
		if last = ping(s.Addr(), p.cmd.Process.Pid); last == nil {
			return nil
		}
		time.Sleep(20 * time.Millisecond)
	}
	return fmt.Errorf("no PONG within %v: %w", startTimeout, last)
}

// ping checks that the server at addr answers PONG and is the process
// pid: another redis-server that took the port first (a test running
// in parallel) would answer PING too, and the tests would share it.
func ping(addr string, pid int) error {
	c, err := net.DialTimeout("tcp", addr, time.Second)
	if err != nil {
		return err
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(time.Second))
	if _, err := c.Write([]byte("PING\r\nINFO server\r\n")); err != nil {
		return err
	}
	r := bufio.NewReader(c)
	line, err := r.ReadString('\n')
	if err != nil {
		return err
	}
	if line = strings.TrimSpace(line); line != "+PONG" {
		return fmt.Errorf("ping answered %q", line)
	}
	var size int
	if line, err = r.ReadString('\n'); err != nil {
		return err
	}
	if _, err := fmt.Sscanf(line, "$%d", &size); err != nil {
		return fmt.Errorf("INFO answered %q", strings.TrimSpace(line))
	}
	info := make([]byte, size)
	if _, err := io.ReadFull(r, info); err != nil {
		return err
	}
	want := fmt.Sprintf("process_id:%d\r\n", pid)
	if !strings.Contains(string(info), want) {
		return fmt.Errorf("another redis-server answers on %s", addr)
	}
	return nil
}

// logTail returns the end of the server's log for error messages.
func (s *Server) logTail() string {
	b, err := os.ReadFile(filepath.Join(s.logs, "redis.log"))
	if err != nil {
		return ""
	}
	if len(b) > 2000 {
		b = b[len(b)-2000:]
	}
	return string(b)
}

// freePort asks the kernel for a free port by listening on port 0; the
// server then binds it (a small race with other processes is accepted).
func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, fmt.Errorf("find a free port: %w", err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}
