package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// freePorts returns n distinct ports of 127.0.0.1, each free for TCP and
// UDP when asked, chosen below the kernel's range of ephemeral ports: the
// simulated cloud the demo starts listens on port 0, and a port from that
// range could be handed to it before cnsd binds it. All are held until
// the last is chosen. Another process may still take a port before the
// demo binds it, which only makes the test fail, never pass wrongly.
func freePorts(t *testing.T, n int) []int {
	t.Helper()
	low := ephemeralLow()
	var ports []int
	for tries := 0; len(ports) < n; tries++ {
		if tries > 10000 {
			t.Fatalf("no %d free ports below %d", n, low)
		}
		port := 10000 + rand.IntN(low-10000)
		addr := net.JoinHostPort("127.0.0.1", strconv.Itoa(port))
		l, err := net.Listen("tcp", addr)
		if err != nil {
			continue
		}
		defer l.Close()
		pc, err := net.ListenPacket("udp", addr)
		if err != nil {
			continue
		}
		defer pc.Close()
		ports = append(ports, port)
	}
	return ports
}

// ephemeralLow is the first port the kernel hands out for port 0
// (Linux's ip_local_port_range; 32768, its default, elsewhere).
func ephemeralLow() int {
	b, err := os.ReadFile("/proc/sys/net/ipv4/ip_local_port_range")
	if err == nil {
		if f := strings.Fields(string(b)); len(f) == 2 {
			if v, err := strconv.Atoi(f[0]); err == nil && v > 10100 {
				return v
			}
		}
	}
	return 32768
}

// buildDemo builds the demo and the programs it starts into one directory.
func buildDemo(t *testing.T) string {
	t.Helper()
	bin := t.TempDir()
	build := exec.Command("go", "build", "-o", bin, "../../cmd/cnsd", "../../cmd/cnsadm", "../../cmd/mockcloud", ".")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	return bin
}

// TestMakeRunDemo runs what `make run` runs, as a user does: it starts the
// demo on free ports, runs every line it prints in bash as printed and
// checks each one's output (dig: an answer; curl: JSON; cnsadm: exit 0),
// then stops it with SIGINT and wants exit status 0 and the logs kept
// where it said.
func TestMakeRunDemo(t *testing.T) {
	for prog, pkg := range map[string]string{"dig": "bind9-dnsutils", "curl": "curl"} {
		if _, err := exec.LookPath(prog); err != nil {
			t.Fatalf("%s not found: install the Debian package %s (scripts/testdeps.sh)", prog, pkg)
		}
	}
	bin := buildDemo(t)
	ports := freePorts(t, 2)
	dir := t.TempDir()
	cmd := exec.Command(filepath.Join(bin, "demo"), "-bin", bin, "-dir", dir, "-generate", "60,6,3",
		"-dns-port", strconv.Itoa(ports[0]), "-api-port", strconv.Itoa(ports[1]))
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Process.Kill()
	out := bufio.NewScanner(stdout)
	var printed, try []string
	for out.Scan() {
		line := out.Text()
		printed = append(printed, line)
		if s, ok := strings.CutPrefix(line, "    "); ok {
			try = append(try, s)
		}
		if strings.HasPrefix(line, "Ctrl-C") {
			break
		}
	}
	if len(try) == 0 {
		cmd.Wait()
		t.Fatalf("the demo printed nothing to try:\n%s\nstderr:\n%s\n%s", strings.Join(printed, "\n"), stderr.String(), logs(dir))
	}
	t.Logf("demo printed:\n%s", strings.Join(printed, "\n"))
	kinds := map[string]int{}
	for _, line := range try {
		kind := checkLine(t, line, ports[0], ports[1])
		kinds[kind]++
	}
	for _, kind := range []string{"dig +short", "dig", "cnsadm", "curl"} {
		if kinds[kind] == 0 {
			t.Errorf("no %q line printed", kind)
		}
	}
	if err := cmd.Process.Signal(syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	var rest strings.Builder
	for out.Scan() {
		rest.WriteString(out.Text() + "\n")
	}
	if err := cmd.Wait(); err != nil {
		t.Fatalf("after SIGINT the demo ended with %v, want exit status 0; stderr:\n%s", err, stderr.String())
	}
	if !strings.Contains(rest.String(), "logs are in "+filepath.Join(dir, "logs")) {
		t.Errorf("after SIGINT the demo printed %q, want where the logs are", rest.String())
	}
	for _, name := range []string{"cnsd.log", "mockcloud.log"} {
		if fi, err := os.Stat(filepath.Join(dir, "logs", name)); err != nil || fi.Size() == 0 {
			t.Errorf("log %s after exit: %v (size %v)", name, err, fi)
		}
	}
}

var (
	digStatus = regexp.MustCompile(`status: NOERROR\b`)
	digAnswer = regexp.MustCompile(`ANSWER: [1-9]`)
)

// checkLine runs one printed line in bash as a user would paste it and
// checks its output by its program; it returns the line's kind.
func checkLine(t *testing.T, line string, dnsPort, apiPort int) string {
	t.Helper()
	out, err := exec.Command("bash", "-c", line).CombinedOutput()
	if err != nil {
		t.Errorf("%s: %v\n%s", line, err, out)
		return "failed"
	}
	text := strings.TrimSpace(string(out))
	fields := strings.Fields(line)
	switch {
	case fields[0] == "dig":
		if !strings.Contains(line, "-p "+strconv.Itoa(dnsPort)) {
			t.Errorf("%s: not the demo's DNS port %d", line, dnsPort)
		}
		if strings.Contains(line, "+short") {
			if text == "" {
				t.Errorf("%s printed nothing, want the answer", line)
			}
			return "dig +short"
		}
		if strings.Contains(line, " AXFR ") {
			if !strings.Contains(text, "\tSOA\t") || strings.Contains(text, "Transfer failed") {
				t.Errorf("%s printed:\n%s\nwant the zone", line, text)
			}
		} else if !digStatus.MatchString(text) || !digAnswer.MatchString(text) {
			t.Errorf("%s printed:\n%s\nwant status NOERROR with an answer", line, text)
		}
		return "dig"
	case fields[0] == "curl":
		if !json.Valid([]byte(text)) {
			t.Errorf("%s printed %s, want JSON", line, text)
		}
		return "curl"
	case filepath.Base(fields[0]) == "cnsadm":
		if !strings.Contains(line, "-api http://127.0.0.1:"+strconv.Itoa(apiPort)) || !strings.Contains(line, "-config ") {
			t.Errorf("%s: want -api on the demo's port %d and -config", line, apiPort)
		}
		if text == "" {
			t.Errorf("%s printed nothing", line)
		}
		return "cnsadm"
	}
	t.Errorf("%s: a line of no program the test knows", line)
	return "unknown"
}

// TestMakeRunCtrlC runs `make run` as a terminal does (its build step
// taken as done, the binaries built here) and sends SIGINT to its process
// group, as Ctrl-C does: the demo stops its programs and exits 0, so make
// prints no "Error", and the demo says where the logs are.
func TestMakeRunCtrlC(t *testing.T) {
	if _, err := exec.LookPath("make"); err != nil {
		t.Fatal("make not found: install the Debian package make")
	}
	bin := buildDemo(t)
	ports := freePorts(t, 2)
	dir := t.TempDir()
	cmd := exec.Command("make", "-s", "-C", "../..", "-o", "build", "run",
		fmt.Sprintf("RUNFLAGS=-bin %s -dir %s -dns-port %d -api-port %d", bin, dir, ports[0], ports[1]))
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	var out syncBuffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	deadline := time.Now().Add(3 * time.Minute)
	for !strings.Contains(out.String(), "Ctrl-C stops") {
		select {
		case err := <-exited:
			t.Fatalf("make run ended (%v) before printing its Try list:\n%s\n%s", err, out.String(), logs(dir))
		case <-time.After(100 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			t.Fatalf("make run printed no Try list in 3 minutes:\n%s\n%s", out.String(), logs(dir))
		}
	}
	if err := syscall.Kill(-cmd.Process.Pid, syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	err := <-exited
	// make ends itself with the SIGINT once its recipe has ended, as it
	// should; what matters is that the recipe ended well.
	if ee := (*exec.ExitError)(nil); err != nil && (!errors.As(err, &ee) || ee.ExitCode() > 0) {
		t.Errorf("make run after SIGINT: %v, want exit status 0 or the signal", err)
	}
	text := out.String()
	if strings.Contains(text, "Error") || strings.Contains(text, "exit status") || !strings.Contains(text, "logs are in "+filepath.Join(dir, "logs")) {
		t.Errorf("make run after SIGINT printed:\n%s\nwant no error and where the logs are", text)
	}
	if strings.Contains(text, "testdeps: all programs the tests start") {
		t.Errorf("make run checked the test programs (make deps):\n%s", text)
	}
}

// syncBuffer is a bytes.Buffer that a process writes while the test reads.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// TestDemoPortTaken: a port the demo needs, held by another process (this
// test), makes it fail before it starts anything, naming the port and
// the process holding it, and print nothing to try.
func TestDemoPortTaken(t *testing.T) {
	bin := buildDemo(t)
	for _, tt := range []struct {
		name, proto, flag string
	}{
		{"DNS over UDP", "udp", "-dns-port"},
		{"DNS over TCP", "tcp", "-dns-port"},
		{"API", "tcp", "-api-port"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			ports := freePorts(t, 2)
			held := ports[0]
			if tt.flag == "-api-port" {
				held = ports[1]
			}
			hold(t, tt.proto, held)
			dir := t.TempDir()
			cmd := exec.Command(filepath.Join(bin, "demo"), "-bin", bin, "-dir", dir,
				"-dns-port", strconv.Itoa(ports[0]), "-api-port", strconv.Itoa(ports[1]))
			out, err := cmd.CombinedOutput()
			if ee := (*exec.ExitError)(nil); !errors.As(err, &ee) || ee.ExitCode() != 1 {
				t.Fatalf("demo with port %d/%s held: %v, want exit status 1\n%s", held, tt.proto, err, out)
			}
			want := strconv.Itoa(held) + "/" + tt.proto + " is taken"
			if !strings.Contains(string(out), want) || !strings.Contains(string(out), "pid "+strconv.Itoa(os.Getpid())) {
				t.Errorf("demo printed:\n%s\nwant %q and this test's pid %d as the holder", out, want, os.Getpid())
			}
			if strings.Contains(string(out), "Try:") {
				t.Errorf("demo printed what to try with a port taken:\n%s", out)
			}
		})
	}
}

// hold binds port of 127.0.0.1 until the test ends.
func hold(t *testing.T, proto string, port int) {
	t.Helper()
	addr := "127.0.0.1:" + strconv.Itoa(port)
	var c interface{ Close() error }
	var err error
	if proto == "udp" {
		c, err = net.ListenPacket("udp", addr)
	} else {
		c, err = net.Listen("tcp", addr)
	}
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
}

func logs(dir string) string {
	var b strings.Builder
	for _, name := range []string{"mockcloud.log", "cnsd.log"} {
		data, _ := os.ReadFile(filepath.Join(dir, "logs", name))
		b.WriteString("--- " + name + "\n" + string(data))
	}
	return b.String()
}
