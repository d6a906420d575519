package feed

import (
	"bufio"
	"encoding/json"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cnsd/cnsd/logtest"
	"github.com/cnsd/cnsd/mockcloud"
	"github.com/cnsd/cnsd/subproc"
	"github.com/cnsd/cnsd/zonegen"
)

// The changefeed VMAPI publishes with is node-sdc-changefeed; the
// simulated cloud's publisher is written from its wire facts. These tests
// put the real library between the two (testdata/changefeed/bridge.js):
// its Listener follows the simulated cloud and its Publisher, on a restify
// 4 server as VMAPI's, serves cnsd's feed. A difference of the simulated
// publisher from the real one the feed relies on, or of the feed from what
// the real publisher sends, fails them.
//
// They need node and the bridge's packages (scripts/testdeps.sh installs
// both; npm ci in testdata/changefeed); without them they skip, or fail
// when CNSD_REQUIRE_NODE is set, as make test sets it.

// bridge is one run of bridge.js.
type bridge struct {
	url  string
	stop func() // ends the run (closes its stdin) and waits for it
}

// startBridge runs the bridge in front of upstream, on port unless it is
// empty, until the test ends or stop, and returns once it serves and its
// Listener has registered upstream.
func startBridge(t *testing.T, upstream, port string) *bridge {
	t.Helper()
	dir, err := filepath.Abs(filepath.Join("testdata", "changefeed"))
	if err != nil {
		t.Fatal(err)
	}
	node, err := exec.LookPath("node")
	missing := ""
	switch _, statErr := os.Stat(filepath.Join(dir, "node_modules", "changefeed")); {
	case err != nil:
		missing = "node is not installed"
	case statErr != nil:
		missing = "the bridge's packages are not installed (npm ci in " + dir + ")"
	}
	if missing != "" {
		if os.Getenv("CNSD_REQUIRE_NODE") != "" {
			t.Fatalf("%s; scripts/testdeps.sh installs it", missing)
		}
		t.Skipf("%s; scripts/testdeps.sh installs it", missing)
	}
	args := []string{filepath.Join(dir, "bridge.js"), upstream}
	if port != "" {
		args = append(args, port)
	}
	cmd := exec.Command(node, args...)
	cmd.Dir = dir
	cmd.SysProcAttr = subproc.Attr() // gone with the test binary, even killed
	stdin, err := cmd.StdinPipe()    // closed when the test ends: the bridge exits
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	var once sync.Once
	stop := func() {
		once.Do(func() {
			stdin.Close()
			done := make(chan struct{})
			go func() { cmd.Wait(); close(done) }()
			select {
			case <-done:
			case <-time.After(5 * time.Second):
				cmd.Process.Kill()
				<-done
			}
			if (t.Failed() || os.Getenv("BRIDGE_LOG_LEVEL") != "") && stderr.Len() > 0 {
				t.Logf("bridge's stderr:\n%s", stderr.String())
			}
		})
	}
	t.Cleanup(stop)
	lines := make(chan string)
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			lines <- sc.Text()
		}
		close(lines)
	}()
	var url string
	registered := false
	deadline := time.After(vmWaitLimit)
	for url == "" || !registered {
		select {
		case line, ok := <-lines:
			if !ok {
				t.Fatalf("the bridge exited before it served: %v\n%s", cmd.Wait(), stderr.String())
			}
			if addr, ok := strings.CutPrefix(line, "listening "); ok {
				url = "http://" + addr
			}
			registered = registered || line == "bootstrap vm"
		case <-deadline:
			t.Fatalf("the bridge neither served nor registered within %v\n%s", vmWaitLimit, stderr.String())
		}
	}
	go func() {
		for range lines {
		}
	}()
	return &bridge{url: url, stop: stop}
}

func TestRealChangefeedPublisher(t *testing.T) {
	c, _, _, sink, logs := bridgedFeed(t, 20)
	if got, want := listedUUIDs(sink.lastListing()), activeUUIDs(c); !reflect.DeepEqual(got, want) {
		t.Fatalf("listed %v through the bridge, want %v", got, want)
	}

	active := activeUUIDs(c)
	tagged, doomed := active[0], active[1]
	tags := map[string]any{"triton.cns.services": "web:8080"}
	if _, err := c.SetTags(tagged, tags); err != nil {
		t.Fatal(err)
	}
	if _, err := c.DestroyVM(doomed); err != nil {
		t.Fatal(err)
	}
	nv := mockcloud.VM{UUID: "f0000000-0000-4000-8000-000000000002", OwnerUUID: "o", Alias: "bridged",
		NICs: []mockcloud.NIC{{MAC: "90:b8:d0:ff:00:02", IP: "10.88.9.10", IPs: []string{"10.88.9.10/16"}, NICTag: "external"}}}
	if _, err := c.CreateVM(nv); err != nil {
		t.Fatal(err)
	}
	seeTags(t, sink, tagged, tags, "the new tags, published by the real publisher")
	vmWaitFor(t, "the destroyed VM gone", func() bool { return sink.isGone(doomed) })
	vmWaitFor(t, "the created VM", func() bool {
		return sink.changedMatch(func(vm zonegen.VM) bool {
			return vm.UUID == nv.UUID && vm.Alias == "bridged" && len(vm.NICs) == 1 && vm.NICs[0].IP == "10.88.9.10"
		})
	})
	if n := sink.numListings(); n != 1 {
		t.Errorf("%d listings, want 1: the real publisher's feed never broke\n%s", n, logs.String())
	}
}

// TestRealChangefeedPublisherRestart: VMAPI restarts, its publisher with
// it, and forgets every registration; the feed must connect again, list
// again, and follow the changes the new publisher sends.
func TestRealChangefeedPublisherRestart(t *testing.T) {
	c, upstream, first, sink, logs := bridgedFeed(t, 12)
	logOnFailure(t, logs)

	first.stop()
	doomed := activeUUIDs(c)[0]
	if _, err := c.DestroyVM(doomed); err != nil { // while VMAPI is down
		t.Fatal(err)
	}
	_, port, err := net.SplitHostPort(strings.TrimPrefix(first.url, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	startBridge(t, upstream, port)
	vmWaitFor(t, "a listing from the restarted VMAPI", func() bool { return sink.numListings() > 1 })
	if slices.Contains(listedUUIDs(sink.lastListing()), doomed) {
		t.Errorf("VM %s, destroyed while VMAPI was down, listed again", doomed)
	}
	tagged := activeUUIDs(c)[0]
	tags := map[string]any{"triton.cns.services": "db:5432"}
	if _, err := c.SetTags(tagged, tags); err != nil {
		t.Fatal(err)
	}
	seeTags(t, sink, tagged, tags, "the new tags, published by the restarted publisher")
}

// TestRealChangefeedPublisherCut: the network drops the feed's connection
// to the real publisher without a close frame; the feed must notice,
// connect and list again, and follow the changes sent after.
func TestRealChangefeedPublisherCut(t *testing.T) {
	c, _, b, sink, logs := bridgedFeed(t, 12)
	logOnFailure(t, logs)

	resp, err := http.Post(b.url+"/_bridge/cut", "application/json", nil)
	if err != nil {
		t.Fatal(err)
	}
	var cut struct{ Cut int }
	err = json.NewDecoder(resp.Body).Decode(&cut)
	resp.Body.Close()
	if err != nil || cut.Cut == 0 {
		t.Fatalf("the bridge cut %d connections (%v), want the feed's", cut.Cut, err)
	}
	vmWaitFor(t, "a listing after the cut", func() bool { return sink.numListings() > 1 })
	tagged := activeUUIDs(c)[0]
	tags := map[string]any{"triton.cns.services": "cache:6379"}
	if _, err := c.SetTags(tagged, tags); err != nil {
		t.Fatal(err)
	}
	seeTags(t, sink, tagged, tags, "the new tags, published after the cut")
}

// bridgedFeed serves a generated cloud of n VMs (at upstream) behind a
// bridge, follows the bridge, and returns once the first listing is in.
func bridgedFeed(t *testing.T, n int) (c *mockcloud.Cloud, upstream string, b *bridge, sink *vmSinkRecorder, logs *logtest.Buffer) {
	t.Helper()
	c = newVMCloud(n)
	cloud := httptest.NewServer(c.Handler())
	t.Cleanup(cloud.Close)
	b = startBridge(t, cloud.URL, "")
	sink = &vmSinkRecorder{}
	logs = runVMAPIAt(t, b.url, sink, nil)
	vmWaitFor(t, "the first listing through the bridge", func() bool { return sink.numListings() > 0 })
	return c, cloud.URL, b, sink, logs
}

// seeTags waits until the feed has reported VM uuid with tags.
func seeTags(t *testing.T, sink *vmSinkRecorder, uuid string, tags map[string]any, what string) {
	t.Helper()
	vmWaitFor(t, what, func() bool {
		return sink.changedMatch(func(vm zonegen.VM) bool {
			return vm.UUID == uuid && reflect.DeepEqual(vm.Tags, tags)
		})
	})
}

// logOnFailure prints the follower's log when the test has failed.
func logOnFailure(t *testing.T, logs *logtest.Buffer) {
	t.Cleanup(func() {
		if t.Failed() {
			t.Log(logs.String())
		}
	})
}
