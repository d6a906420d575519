package redistest

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"
)

// Cluster is a Redis Cluster of masters without replicas, each a Server.
type Cluster struct {
	Nodes []*Server
}

// StartCluster starts n redis-server processes in cluster mode, joins
// them with redis-cli --cluster create and waits until every node reports
// the cluster ok. Like Start, it fails the test when a binary is missing.
func StartCluster(t testing.TB, n int, opts ...Option) *Cluster {
	t.Helper()
	cli, err := exec.LookPath("redis-cli")
	if err != nil {
		t.Fatalf("redistest: redis-cli not found on PATH; install the Debian package %q: %v", "redis-tools", err)
	}
	c := &Cluster{}
	args := []string{"--cluster", "create"}
	for range n {
		o := append([]Option{WithArgs("--cluster-enabled", "yes", "--cluster-config-file", "nodes.conf")}, opts...)
		s := Start(t, o...)
		c.Nodes = append(c.Nodes, s)
		args = append(args, s.Addr())
	}
	out, err := exec.Command(cli, append(args, "--cluster-yes")...).CombinedOutput()
	if err != nil {
		t.Fatalf("redistest: redis-cli --cluster create: %v\n%s", err, out)
	}
	deadline := time.Now().Add(startTimeout)
	for _, s := range c.Nodes {
		for {
			info, err := command(s.Addr(), "CLUSTER", "INFO")
			if err == nil && strings.Contains(info, "cluster_state:ok") {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("redistest: cluster node %s not ok within %v: %v %q", s.Addr(), startTimeout, err, info)
			}
			time.Sleep(50 * time.Millisecond)
		}
	}
	return c
}

// URL returns a redis:// URL naming the first node as host and the
// others as addr parameters: the seed list of a cluster client.
func (c *Cluster) URL() string {
	u := c.Nodes[0].URL()
	for i, s := range c.Nodes[1:] {
		sep := "&"
		if i == 0 {
			sep = "?"
		}
		u += sep + "addr=" + s.Addr()
	}
	return u
}

// command sends one command and returns its reply as text; it reads
// simple strings, errors, integers and bulk strings, which is all the
// harness needs.
func command(addr string, args ...string) (string, error) {
	conn, err := net.DialTimeout("tcp", addr, time.Second)
	if err != nil {
		return "", err
	}
	defer conn.Close()
	_ = conn.SetDeadline(time.Now().Add(5 * time.Second))
	var b strings.Builder
	fmt.Fprintf(&b, "*%d\r\n", len(args))
	for _, a := range args {
		fmt.Fprintf(&b, "$%d\r\n%s\r\n", len(a), a)
	}
	if _, err := conn.Write([]byte(b.String())); err != nil {
		return "", err
	}
	r := bufio.NewReader(conn)
	line, err := r.ReadString('\n')
	if err != nil {
		return "", err
	}
	line = strings.TrimRight(line, "\r\n")
	switch {
	case line == "":
		return "", fmt.Errorf("empty reply")
	case line[0] == '-':
		return "", fmt.Errorf("%s: %s", args[0], line[1:])
	case line[0] == '$':
		n, err := strconv.Atoi(line[1:])
		if err != nil || n < 0 {
			return "", err
		}
		buf := make([]byte, n+2)
		if _, err := io.ReadFull(r, buf); err != nil {
			return "", err
		}
		return string(buf[:n]), nil
	default:
		return line[1:], nil
	}
}
