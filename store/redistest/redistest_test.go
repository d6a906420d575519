package redistest

import (
	"bufio"
	"fmt"
	"net"
	"runtime"
	"strings"
	"testing"
	"time"
)

// inline sends one inline command and returns the first reply line.
func inline(t *testing.T, addr, cmd string) string {
	t.Helper()
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if _, err := c.Write([]byte(cmd + "\r\n")); err != nil {
		t.Fatal(err)
	}
	r := bufio.NewReader(c)
	line, err := r.ReadString('\n')
	if err != nil {
		t.Fatal(err)
	}
	if strings.HasPrefix(line, "$") && line != "$-1\r\n" {
		line, err = r.ReadString('\n')
		if err != nil {
			t.Fatal(err)
		}
	}
	return strings.TrimSpace(line)
}

func TestKillRestartKeepsAcknowledgedWrites(t *testing.T) {
	s := Start(t)
	if got := inline(t, s.Addr(), "SET k v"); got != "+OK" {
		t.Fatalf("SET answered %q", got)
	}
	s.Kill()
	s.Restart()
	if got := inline(t, s.Addr(), "GET k"); got != "v" {
		t.Fatalf("after kill and restart GET k = %q, want v", got)
	}
	if !strings.HasPrefix(s.URL(), "redis://127.0.0.1:") {
		t.Errorf("URL() = %q", s.URL())
	}
}

// fatalRecorder is a testing.TB whose Fatalf records the message and ends
// the goroutine, as the real one does.
type fatalRecorder struct {
	testing.TB
	msg string
}

func (f *fatalRecorder) Helper() {}

func (f *fatalRecorder) Fatalf(format string, args ...any) {
	f.msg = fmt.Sprintf(format, args...)
	runtime.Goexit()
}

func TestMissingBinaryFailsNamingThePackage(t *testing.T) {
	t.Setenv("PATH", t.TempDir())
	rec := &fatalRecorder{TB: t}
	done := make(chan struct{})
	go func() {
		defer close(done)
		Start(rec)
	}()
	<-done
	if !strings.Contains(rec.msg, `Debian package "redis-server"`) {
		t.Fatalf("Start without redis-server: %q, want a failure naming the package", rec.msg)
	}
}

func TestCluster(t *testing.T) {
	c := StartCluster(t, 3)
	// Keys in different slots land on different nodes; each node
	// redirects the others' keys with MOVED.
	moved := 0
	for _, key := range []string{"{a}", "{b}", "{c}", "{d}", "{e}"} {
		for _, s := range c.Nodes {
			if _, err := command(s.Addr(), "SET", key, "v"); err != nil && strings.Contains(err.Error(), "MOVED") {
				moved++
			}
		}
	}
	if moved != 10 {
		t.Errorf("%d MOVED replies for 5 keys on 3 nodes, want 10", moved)
	}
	if u := c.URL(); strings.Count(u, "addr=") != 2 {
		t.Errorf("URL() = %q, want two addr parameters", u)
	}
}

func TestSentinelPromotesTheReplica(t *testing.T) {
	start := time.Now()
	set := StartSentinel(t, 1)
	t.Logf("set up in %v", time.Since(start))
	if m := set.Master(); m != set.Nodes[0] {
		t.Fatalf("Master() = %v, want the first node", m)
	}
	if _, err := command(set.Nodes[0].Addr(), "SET", "k", "v"); err != nil {
		t.Fatal(err)
	}
	if _, err := command(set.Nodes[0].Addr(), "WAIT", "1", "5000"); err != nil {
		t.Fatal(err)
	}
	set.Nodes[0].Kill()
	start = time.Now()
	defer func() { t.Logf("failover in %v", time.Since(start)) }()
	if got := set.AwaitFailover(t, set.Nodes[0]); got != set.Nodes[1] {
		t.Fatalf("promoted %v, want the replica", got)
	}
	if v, err := Get(set.Nodes[1], "k"); err != nil || v != "v" {
		t.Fatalf("GET k on the promoted replica = %q, %v; want v", v, err)
	}
	if !strings.Contains(set.URL(), "master_name="+MasterName) || strings.Count(set.URL(), "addr=") != 2 {
		t.Errorf("URL() = %q", set.URL())
	}
}
