package main

import (
	"encoding/json"
	"fmt"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/cnsd/cnsd/mockcloud"
	"github.com/cnsd/cnsd/mockcloud/ufdstest"
	"github.com/cnsd/cnsd/store"
	"github.com/cnsd/cnsd/store/redistest"
)

// cloudOnRedis is the simulated cloud (HTTP APIs and slapd) and a
// redis-server, on which the tests start real cnsd processes.
type cloudOnRedis struct {
	t     *testing.T
	bin   string
	cloud *mockcloud.Cloud
	api   string
	ldap  *ufdstest.Server
	redis *redistest.Server
}

func newCloudOnRedis(t *testing.T, redisOpts ...redistest.Option) *cloudOnRedis {
	bin := filepath.Join(t.TempDir(), "cnsd")
	if out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	cloud := mockcloud.New(cloudFixture(), nil)
	cloudAPI := httptest.NewServer(cloud.Handler())
	t.Cleanup(cloudAPI.Close)
	return &cloudOnRedis{t: t, bin: bin, cloud: cloud, api: cloudAPI.URL, ldap: ufdstest.Start(t, cloud), redis: redistest.Start(t, redisOpts...)}
}

// start runs cnsd with its DNS on dnsPort (0: a free one) and peers (host:port)
// as the secondaries of its zones; it is stopped when the test ends.
func (c *cloudOnRedis) start(dnsPort int, peers ...string) (dnsAddr string, cmd *exec.Cmd) {
	t := c.t
	dir := t.TempDir()
	ports := freePorts(t, 2)
	if dnsPort != 0 {
		ports[0] = dnsPort
	}
	peerList, _ := json.Marshal(append([]string{}, peers...))
	cfg := fmt.Sprintf(`{"my_name": "ns1.example.test", "hostmaster": "hostmaster@example.test", "allow_transfer": ["127.0.0.1"],
  "forward_zones": {"cloud.example.test": {"networks": ["*"], "peers": %s}}, "store": {"redis": %q},
  "dns": {"listen": ["127.0.0.1:%d"]}, "api": {"listen": "127.0.0.1:%d", "token": "cnsd-test-token"},
  "vmapi_opts": {"url": %q}, "cnapi_opts": {"url": %q}, "napi_opts": {"url": %q},
  "ufds_opts": {"url": %q, "bindDN": %q, "bindPassword": %q}}`, peerList, c.redis.URL(), ports[0], ports[1],
		c.api, c.api, c.api, c.ldap.URL, ufdstest.RootDN, ufdstest.Password)
	path := filepath.Join(dir, "cnsd.json")
	if err := os.WriteFile(path, []byte(cfg), 0o644); err != nil {
		t.Fatal(err)
	}
	log, err := os.Create(filepath.Join(dir, "cnsd.log"))
	if err != nil {
		t.Fatal(err)
	}
	cmd = exec.Command(c.bin, "-config", path)
	cmd.Stdout, cmd.Stderr = log, log
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Signal(syscall.SIGCONT)
		_ = cmd.Process.Signal(syscall.SIGTERM)
		_ = cmd.Wait()
		log.Close()
		if t.Failed() {
			b, _ := os.ReadFile(log.Name())
			t.Logf("log of cnsd on %d:\n%s", ports[0], b)
		}
	})
	return fmt.Sprintf("127.0.0.1:%d", ports[0]), cmd
}

// TestWriterKilledOnRedis runs two cnsd processes (the real binary) on one
// redis-server over the simulated cloud: both answer AXFR of the cloud's
// zone at the same serial; the writer is killed with SIGKILL (no lease
// release) and the other takes over and goes on applying the cloud's
// changes.
func TestWriterKilledOnRedis(t *testing.T) {
	c := newCloudOnRedis(t)
	cloud := c.cloud
	const zone = "cloud.example.test."
	inst := cloudVM + ".inst." + cloudOwner + "." + zone
	writer, writerCmd := c.start(0)
	waitFor(t, "the writer to publish the VM", func() bool { return answers(writer, inst, "192.0.2.11") })
	follower, _ := c.start(0)
	waitFor(t, "both to serve one serial", func() bool {
		s := serialOf(writer, zone)
		return s != 0 && serialOf(follower, zone) == s
	})
	if nw, nf := axfrCount(writer, zone), axfrCount(follower, zone); nw <= 2 || nw != nf {
		t.Fatalf("AXFR: %d records from the writer, %d from the follower", nw, nf)
	}

	before := store.Serial(serialOf(follower, zone))
	if err := writerCmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	_ = writerCmd.Wait()
	if _, err := cloud.SetTags(cloudVM, map[string]any{"triton.cns.services": "web,api"}); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the follower to take over and publish the new service", func() bool {
		return answers(follower, "api.svc."+cloudOwner+"."+zone, "192.0.2.11")
	})
	// Commits the killed writer made that Redis lost would have had the
	// serials right after before: the new writer takes none of them.
	if after := store.Serial(serialOf(follower, zone)); after.Less(before + store.DefaultTakeoverGap) {
		t.Errorf("serial after the takeover %d, want at least %d (%d + the takeover gap)", after, before+store.DefaultTakeoverGap, before)
	}
}
