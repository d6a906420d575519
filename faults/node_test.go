package faults

import (
	"bufio"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// node is one cnsd process, which can be killed and started again on the
// same configuration, ports and store.
type node struct {
	e       *env
	name    string
	dns     string // host:port
	api     string // http://host:port
	store   string // the store's JSON configuration
	cfg     string // configuration file
	logPath string
	peers   bool // the secondaries are its peers

	mu     sync.Mutex // guards cmd and exited
	cmd    *exec.Cmd
	exited chan struct{} // closed when cmd ends
	// killed is set while the test itself ends the process, so that an
	// exit of cnsd's own is told apart.
	killed bool
	// exits are cnsd's own exits, with the end of its log.
	exits []string
}

// newNode prepares (does not start) a cnsd named name on fresh ports.
func (e *env) newNode(name, store string, peers bool) *node {
	dir := e.t.TempDir()
	nd := &node{e: e, name: name, store: store, peers: peers,
		dns:     fmt.Sprintf("127.0.0.1:%d", freePort(e.t)),
		api:     fmt.Sprintf("http://127.0.0.1:%d", freePort(e.t)),
		cfg:     filepath.Join(dir, "cnsd.json"),
		logPath: filepath.Join(dir, "cnsd.log")}
	e.t.Cleanup(func() {
		nd.stop()
		if e.t.Failed() {
			e.t.Logf("log of %s (last lines):\n%s", nd.name, nd.logTail(60))
			keepLog(e.t, nd.logPath, nd.name)
		}
	})
	return nd
}

// keepLog copies a failed run's log of name into the directory
// FAULTS_LOGS names, if it is set, as <test>-<name>.log: the test's
// temporary directory goes when it ends.
func keepLog(t *testing.T, path, name string) {
	dir := os.Getenv("FAULTS_LOGS")
	if dir == "" {
		return
	}
	b, err := os.ReadFile(path)
	if err == nil {
		dst := filepath.Join(dir, strings.ReplaceAll(t.Name(), "/", "_")+"-"+name+".log")
		err = os.WriteFile(dst, b, 0o644)
	}
	if err != nil {
		t.Logf("keep the log of %s: %v", name, err)
	}
}

// writeConfig writes the node's configuration; secondaries are the
// addresses told to the node as the peers of every zone when it has
// peers.
func (nd *node) writeConfig(secondaries ...string) {
	peers := "[]"
	if nd.peers {
		quoted := make([]string, len(secondaries))
		for i, a := range secondaries {
			quoted[i] = strconv.Quote(a)
		}
		peers = "[" + strings.Join(quoted, ", ") + "]"
	}
	cfg := fmt.Sprintf(`{
  "my_name": "ns0.faults.example.test",
  "hostmaster": "hostmaster@example.test",
  "use_alias": true,
  "use_login": true,
  "forward_zones": {%q: {"networks": ["*"], "peers": %s}},
  "reverse_zones": {"peers": %s},
  "catalog_zone": {"name": %q, "peers": %s},
  "allow_transfer": ["127.0.0.0/8"],
  "store": %s,
  "dns": {"listen": [%q]},
  "api": {"listen": %q, "token": %q},
  "hysteresis": {"window_seconds": 1, "divisor": 1, "last_member_delay_seconds": 1},
  "compute_nodes": {"heartbeat_limit_seconds": 3600, "boot_grace_seconds": 1},
  "vmapi_opts": {"url": %q},
  "cnapi_opts": {"url": %q, "poll_seconds": 1},
  "napi_opts": {"url": %q, "cache_seconds": 1},
  "ufds_opts": {"url": %q, "bindDN": "cn=root, o=smartdc", "bindPassword": "ufdstest", "cache_seconds": 1}
}
`, strings.TrimSuffix(forwardZone, "."), peers, peers, strings.TrimSuffix(catalogZone, "."), peers, nd.store,
		nd.dns, strings.TrimPrefix(nd.api, "http://"), apiToken,
		nd.e.cloudURL, nd.e.cloudURL, nd.e.cloudURL, nd.e.ldap.URL)
	if err := os.WriteFile(nd.cfg, []byte(cfg), 0o600); err != nil {
		nd.e.t.Fatal(err)
	}
}

// start runs the process; its output is appended to the node's log.
func (nd *node) start() {
	nd.e.t.Helper()
	log, err := os.OpenFile(nd.logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		nd.e.t.Fatal(err)
	}
	fmt.Fprintf(log, "=== %s start %s\n", nd.name, time.Now().Format(time.RFC3339Nano))
	cmd := exec.Command(cnsdBin, "-config", nd.cfg)
	cmd.Stdout, cmd.Stderr = log, log
	if err := cmd.Start(); err != nil {
		log.Close()
		nd.e.t.Fatal(err)
	}
	exited := make(chan struct{})
	nd.mu.Lock()
	nd.cmd, nd.exited, nd.killed = cmd, exited, false
	nd.mu.Unlock()
	go func() {
		err := cmd.Wait()
		log.Close()
		nd.mu.Lock()
		if !nd.killed {
			nd.exits = append(nd.exits, fmt.Sprintf("%v; log ends:\n%s", err, nd.logTail(15)))
		}
		nd.mu.Unlock()
		close(exited)
	}()
}

// alive reports whether the process runs.
func (nd *node) alive() bool {
	nd.mu.Lock()
	defer nd.mu.Unlock()
	if nd.exited == nil {
		return false
	}
	select {
	case <-nd.exited:
		return false
	default:
		return true
	}
}

// signal sends sig to the process and waits for it to end.
// pause stops the process (SIGSTOP) without ending it, as a slow or cut
// off host would; resume continues it.
func (nd *node) pause()  { nd.send(syscall.SIGSTOP) }
func (nd *node) resume() { nd.send(syscall.SIGCONT) }

func (nd *node) send(sig syscall.Signal) {
	nd.mu.Lock()
	cmd := nd.cmd
	nd.mu.Unlock()
	if cmd != nil {
		_ = cmd.Process.Signal(sig)
	}
}

func (nd *node) signal(sig syscall.Signal) {
	nd.mu.Lock()
	cmd, exited := nd.cmd, nd.exited
	nd.killed = true
	nd.mu.Unlock()
	if cmd == nil {
		return
	}
	_ = cmd.Process.Signal(sig)
	select {
	case <-exited:
	case <-time.After(30 * time.Second):
		_ = cmd.Process.Kill()
		<-exited
	}
}

// kill ends the process with SIGKILL, as a crash would.
func (nd *node) kill() { nd.signal(syscall.SIGKILL) }

// stop ends the process with SIGTERM.
func (nd *node) stop() { nd.signal(syscall.SIGTERM) }

// ownExits lists the times cnsd exited without being told to.
func (nd *node) ownExits() []string {
	nd.mu.Lock()
	defer nd.mu.Unlock()
	return append([]string(nil), nd.exits...)
}

// logTail returns the last n lines of the node's log.
func (nd *node) logTail(n int) string {
	f, err := os.Open(nd.logPath)
	if err != nil {
		return err.Error()
	}
	defer f.Close()
	var lines []string
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		lines = append(lines, sc.Text())
		if len(lines) > n {
			lines = lines[1:]
		}
	}
	return strings.Join(lines, "\n")
}

// get fetches an API path with the token; it returns the body, or an
// error for a failure or a status other than 200.
func (nd *node) get(path string) (string, error) {
	return nd.call(http.MethodGet, path)
}

func (nd *node) call(method, path string) (string, error) {
	req, err := http.NewRequest(method, nd.api+path, nil)
	if err != nil {
		return "", err
	}
	req.Header.Set("Authorization", "Bearer "+apiToken)
	c := http.Client{Timeout: 3 * time.Second}
	resp, err := c.Do(req)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK {
		return string(b), fmt.Errorf("%s %s: %s", method, path, resp.Status)
	}
	return string(b), nil
}

// writer reports whether the node follows the cloud and writes (its
// changefeed metric is 1).
func (nd *node) writer() bool {
	m, err := nd.get("/metrics")
	return err == nil && strings.Contains(m, "\ncnsd_feed_changefeed_connected 1")
}
