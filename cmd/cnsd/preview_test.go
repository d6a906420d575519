package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/cnsd/cnsd/api"
	"github.com/cnsd/cnsd/mockcloud"
)

// previewFixtures are the clouds over which cnsadm preview must print
// exactly what the running daemon publishes; another fixture is one more
// line.
var previewFixtures = []string{
	"../../mockcloud/testdata/example.json",
	"../../mockcloud/testdata/realistic.json",
}

// TestPreviewMatchesDaemon runs cnsd over each fixture's simulated cloud
// and, for every VM of the fixture, compares what cnsadm preview (the
// built binary, with cnsd's configuration and -now) says of it with what
// the daemon answers on GET /vm/:uuid: the same records per zone with the
// same TTLs, and, for the VMs the daemon follows, the same decision.
func TestPreviewMatchesDaemon(t *testing.T) {
	bin := filepath.Join(t.TempDir(), "cnsadm")
	if out, err := exec.Command("go", "build", "-o", bin, "../cnsadm").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	for _, path := range previewFixtures {
		t.Run(filepath.Base(path), func(t *testing.T) { previewMatchesDaemon(t, bin, path) })
	}
}

func previewMatchesDaemon(t *testing.T, cnsadm, path string) {
	f, err := mockcloud.LoadFixture(path)
	if err != nil {
		t.Fatal(err)
	}
	c := startOverFixture(t, f, previewZones(f))
	settle(t, c, cnsadm, path, f)
	// Settings that make the owner's login, the VM's alias and the TTL
	// matter, applied by a reload.
	c.extra = `, "use_login": true, "use_alias": true, "ttl": {"record": 45}`
	c.writeConfig(previewZones(f))
	settle(t, c, cnsadm, path, f)
}

// settle waits for the daemon to publish what preview prints, as it does
// once the bootstrap or a reload is through; what still differs after 30
// s is a difference.
func settle(t *testing.T, c *overCloud, cnsadm, path string, f *mockcloud.Fixture) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		diff := comparePreview(t, c, cnsadm, path, f)
		if diff == "" {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("preview and the daemon differ:\n%s", diff)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// previewZones maps every network to one zone and each network pool to a
// zone of its own, so that pool membership shows in the names.
func previewZones(f *mockcloud.Fixture) string {
	zones := []string{`"cloud.example.test": {"networks": ["*"]}`}
	for i, p := range f.NetworkPools {
		zones = append(zones, fmt.Sprintf(`"pool%d.example.test": {"networks": [%q]}`, i, p.UUID))
	}
	return strings.Join(zones, ", ")
}

// comparePreview returns "" when preview and the daemon agree on every VM
// of f, or what differs.
func comparePreview(t *testing.T, c *overCloud, cnsadm, path string, f *mockcloud.Fixture) string {
	var stdout, stderr bytes.Buffer
	cmd := exec.Command(cnsadm, "-config", c.config, "-j", "preview", "-now", time.Now().UTC().Format(time.RFC3339), path)
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("cnsadm preview: %v\n%s", err, stderr.String())
	}
	var previewed []api.VM
	if err := json.Unmarshal(stdout.Bytes(), &previewed); err != nil {
		t.Fatalf("cnsadm -j preview: %v\n%s", err, stdout.String())
	}
	byUUID := map[string]api.VM{}
	for _, vm := range previewed {
		byUUID[vm.UUID] = vm
	}
	var diffs []string
	for _, fvm := range f.VMs {
		want, ok := byUUID[fvm.UUID]
		if !ok {
			diffs = append(diffs, fmt.Sprintf("VM %s: not previewed (%s)", fvm.UUID, stderr.String()))
			continue
		}
		got, known, err := daemonVM(c.api, fvm.UUID)
		if err != nil {
			return err.Error()
		}
		if d := vmDiff(want, got, known); d != "" {
			diffs = append(diffs, fmt.Sprintf("VM %s: %s", fvm.UUID, d))
		}
	}
	return strings.Join(diffs, "\n")
}

// daemonVM asks the daemon for a VM; known is false on 404 (no records
// and not followed), which is a VM with no records. An error means the
// daemon does not answer (yet).
func daemonVM(apiURL, uuid string) (vm api.VM, known bool, err error) {
	resp, err := authed.Get(apiURL + "/vm/" + uuid)
	if err != nil {
		return vm, false, err
	}
	defer resp.Body.Close()
	if resp.StatusCode == http.StatusNotFound {
		return api.VM{UUID: uuid, Names: []string{}, Zones: []api.VMZone{}}, false, nil
	}
	if resp.StatusCode != http.StatusOK {
		return vm, false, fmt.Errorf("GET /vm/%s: %s", uuid, resp.Status)
	}
	return vm, true, json.NewDecoder(resp.Body).Decode(&vm)
}

// vmDiff compares what preview says of a VM with what the daemon
// answers. The records and names must be the same; so must the decision
// when the daemon follows the VM. When it was evaluated, and what only a
// running daemon has (self-removals pending, held deletions), are not
// compared.
func vmDiff(preview, daemon api.VM, known bool) string {
	if !reflect.DeepEqual(preview.Zones, daemon.Zones) || !reflect.DeepEqual(preview.Names, daemon.Names) {
		return fmt.Sprintf("records differ\npreview: %s\ndaemon:  %s", jsonOf(preview.Zones), jsonOf(daemon.Zones))
	}
	if !known {
		return ""
	}
	preview.LastVisit, daemon.LastVisit = 0, 0
	daemon.Pending, daemon.Held = nil, nil
	if !reflect.DeepEqual(preview, daemon) {
		return fmt.Sprintf("decisions differ\npreview: %s\ndaemon:  %s", jsonOf(preview), jsonOf(daemon))
	}
	return ""
}

func jsonOf(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

// TestPreviewFixturesExist keeps previewFixtures in step with the tree:
// a listed fixture that is gone fails, rather than the comparison
// silently shrinking.
func TestPreviewFixturesExist(t *testing.T) {
	for _, path := range previewFixtures {
		if _, err := os.Stat(path); err != nil {
			t.Error(err)
		}
	}
}
