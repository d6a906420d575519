package main

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cnsd/cnsd/api/client"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/")

const (
	pvVM    = "00000001-0000-4000-8000-000000000001"
	pvOwner = "a11ce000-0000-4000-8000-000000000001"
	pvNet   = "e0000000-0000-4000-8000-00000000000e"
	pvCN    = "c0000000-0000-4000-8000-00000000000c"
	pvPool  = "f0000000-0000-4000-8000-00000000000f"
	// pvInst is the instance name's A record the test VM gets when listed.
	pvInst = pvVM + ".inst." + pvOwner + ".cloud.example.test.\t30\tA\t192.0.2.11"
)

// pvVMJSON is a VMAPI VM; server is its server_uuid ("" for none).
func pvVMJSON(server string) string {
	return `{"uuid": "` + pvVM + `", "owner_uuid": "` + pvOwner + `", "server_uuid": "` + server + `",
  "state": "running", "tags": {"triton.cns.services": "web:80"}, "brand": "joyent", "ram": 1024,
  "nics": [{"ip": "192.0.2.11", "network_uuid": "` + pvNet + `", "nic_tag": "external", "mac": "90:b8:d0:00:00:01"}]}`
}

// runPreview writes input to a file and runs cnsadm preview on it with
// flags; it returns stdout, stderr and the error.
func runPreview(t *testing.T, input string, flags ...string) (string, string, error) {
	t.Helper()
	dir := t.TempDir()
	cfg, in := filepath.Join(dir, "cnsd.json"), filepath.Join(dir, "input.json")
	if err := os.WriteFile(cfg, []byte(`{"my_name": "ns1.example.test", "hostmaster": "hostmaster@example.test",
  "forward_zones": {"cloud.example.test": {"networks": ["*"]}, "pool.example.test": {"networks": ["`+pvPool+`"]}}}`), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(in, []byte(input), 0o644); err != nil {
		t.Fatal(err)
	}
	var stdout, stderr bytes.Buffer
	args := []string{"-config", cfg}
	if len(flags) > 0 && flags[0] == "-j" {
		args, flags = append(args, "-j"), flags[1:]
	}
	args = append(append(append(args, "preview"), flags...), in)
	err := run(context.Background(), args, &stdout, &stderr)
	return stdout.String(), stderr.String(), err
}

// TestPreviewInputs: preview takes a view, a bare VMAPI VM (with the
// owner, compute node and networks it lacks assumed, and said so) and a
// whole cloud fixture (taken as it is, as cnsd would see that cloud);
// anything else is refused with what it wants.
func TestPreviewInputs(t *testing.T) {
	vm := pvVMJSON("")
	tests := []struct {
		name, input string
		wantErr     bool
		want        []string
		dontWant    []string
	}{
		{"bare VM", vm, false, []string{"; assumed: VM 00000001", "owner " + pvOwner + " not given",
			"network " + pvNet + " not given", pvInst, "web.svc." + pvOwner}, []string{"compute node"}},
		{"bare VM on a compute node", pvVMJSON(pvCN), false, []string{"compute node " + pvCN + " not given: set up and running",
			"unresolved no", pvInst}, nil},
		{"view with owner and network", `{"vm": ` + vm + `, "owner": {"uuid": "` + pvOwner + `", "login": "alice",
  "triton_cns_enabled": "false"}, "networks": {"` + pvNet + `": {"uuid": "` + pvNet + `", "name": "external"}}}`,
			false, []string{"instance no", "user_en_flag"}, []string{"assumed", pvInst}},
		{"view with the network in a pool", `{"vm": ` + vm + `, "networks": {"` + pvNet + `": {"name": "external",
  "pools": ["` + pvPool + `"]}}}`, false, []string{"owner " + pvOwner + " not given",
			pvVM + ".inst." + pvOwner + ".pool.example.test.\t30\tA\t192.0.2.11"}, []string{"network " + pvNet, pvInst}},
		// CNAPI lists only set-up servers to cnsd: one that is not is
		// unknown, and its VMs unresolved.
		{"view with a compute node not set up", `{"vm": ` + pvVMJSON(pvCN) + `, "server": {"uuid": "` + pvCN + `", "setup": false,
  "status": "running", "last_heartbeat": "2026-03-01T12:00:00Z"}}`, false, []string{"unresolved yes", "server_unknown: " + pvCN},
			[]string{"compute node " + pvCN + " not given", pvInst}},
		// UFDS answering that there is no such account is an answer,
		// not an outage: the VM is resolved and lists nothing.
		{"fixture lacking the owner", `{"vms": [` + vm + `], "users": [], "networks": []}`,
			false, []string{"unresolved no", "instance no", "user_en_flag: triton_cns_enabled is"}, []string{"assumed", pvInst}},
		{"fixture with a VM that does not decode", `{"vms": [` + vm + `, {"uuid": "00000002-0000-4000-8000-000000000002", "state": 7}]}`,
			false, []string{"; unreadable, cnsd keeps what it published for it: vms[1] 00000002-0000-4000-8000-000000000002"}, nil},
		{"bare VM that does not decode", `{"uuid": "` + pvVM + `", "nics": 3}`, true, []string{`a VMAPI VM (it has "uuid")`, "nics"}, nil},
		{"not JSON", `vm`, true, []string{"not a JSON object"}, nil},
		{"something else", `{"name": "web"}`, true, []string{`{"vm": …}`, `{"uuid": …}`, `{"vms": […]}`}, nil},
		{"a view whose vm is not an object", `{"vm": 3}`, true, []string{`a VM view (it has "vm")`}, nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, _, err := runPreview(t, tc.input)
			if (err != nil) != tc.wantErr {
				t.Fatalf("preview: %v, want error %v\n%s", err, tc.wantErr, got)
			}
			if err != nil {
				got = err.Error()
			}
			for _, w := range tc.want {
				if !strings.Contains(got, w) {
					t.Errorf("lacks %q:\n%s", w, got)
				}
			}
			for _, w := range tc.dontWant {
				if strings.Contains(got, w) {
					t.Errorf("has %q:\n%s", w, got)
				}
			}
		})
	}
}

// TestPreviewNow: -now fixes the clock the compute-node rule reads: a
// node that is not running is down once its heartbeat is older than the
// limit (1 h by default), and a node that booted less than the boot grace
// ago (2 min) is down until it has passed.
func TestPreviewNow(t *testing.T) {
	view := func(status, boot, heartbeat string) string {
		return `{"vm": ` + pvVMJSON(pvCN) + `, "server": {"uuid": "` + pvCN + `", "setup": true, "status": "` + status + `",
  "last_boot": "` + boot + `", "last_heartbeat": "` + heartbeat + `"}}`
	}
	tests := []struct {
		name, input, now string
		down             string // the cn_down detail, "" when the node is up
	}{
		{"silent less than the limit", view("unknown", "2026-02-01T00:00:00Z", "2026-03-01T10:00:00Z"), "2026-03-01T10:59:00Z", ""},
		{"silent longer than the limit", view("unknown", "2026-02-01T00:00:00Z", "2026-03-01T10:00:00Z"), "2026-03-01T11:01:00Z",
			"cn_down: server " + pvCN + " is unknown with last heartbeat 2026-03-01T10:00:00Z"},
		{"running, however old the heartbeat", view("running", "2026-02-01T00:00:00Z", "2026-03-01T10:00:00Z"), "2026-03-02T10:00:00Z", ""},
		{"within the boot grace", view("running", "2026-03-01T10:00:00Z", "2026-03-01T10:00:30Z"), "2026-03-01T10:01:59Z",
			"cn_down: server " + pvCN + " booted at 2026-03-01T10:00:00Z"},
		{"after the boot grace", view("running", "2026-03-01T10:00:00Z", "2026-03-01T10:00:30Z"), "2026-03-01T10:02:01Z", ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, _, err := runPreview(t, tc.input, "--now", tc.now)
			if err != nil {
				t.Fatal(err)
			}
			listed := "service web (ports [80]): listed " + map[bool]string{true: "no", false: "yes"}[tc.down != ""]
			if !strings.Contains(got, listed) || tc.down != "" && !strings.Contains(got, tc.down) ||
				tc.down == "" && strings.Contains(got, "cn_down") {
				t.Errorf("at %s want %q and cn_down %q:\n%s", tc.now, listed, tc.down, got)
			}
		})
	}
	if _, _, err := runPreview(t, pvVMJSON(""), "-now", "yesterday"); err == nil || !strings.Contains(err.Error(), "RFC 3339") {
		t.Errorf("-now yesterday: %v, want an error asking for RFC 3339", err)
	}
}

// TestPreviewJSON: -j prints GET /vm/:uuid's type: one VM for a VM, a
// list for a fixture; what was assumed goes to stderr.
func TestPreviewJSON(t *testing.T) {
	out, errOut, err := runPreview(t, pvVMJSON(""), "-j", "-now", "2026-03-01T12:00:00Z")
	if err != nil {
		t.Fatal(err)
	}
	for _, key := range []string{`"uuid"`, `"names"`, `"last_visit": 1772366400000`, `"services"`, `"zones"`, `"records"`, `"value"`, `"ttl": 30`} {
		if !strings.Contains(out, key) {
			t.Errorf("lacks %s:\n%s", key, out)
		}
	}
	var vm client.VM
	dec := json.NewDecoder(strings.NewReader(out))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&vm); err != nil || vm.UUID != pvVM || len(vm.Zones) < 2 || len(vm.Names) == 0 {
		t.Errorf("not one VM of GET /vm/:uuid (%v): %+v", err, vm)
	}
	if !strings.Contains(errOut, "; assumed: VM "+pvVM) || strings.Contains(out, "assumed") {
		t.Errorf("assumptions belong on stderr; stderr:\n%s", errOut)
	}
	out, _, err = runPreview(t, `{"vms": [`+pvVMJSON("")+`]}`, "-j")
	var vms []client.VM
	if err != nil || json.Unmarshal([]byte(out), &vms) != nil || len(vms) != 1 {
		t.Errorf("fixture: %v, want a list of one VM:\n%s", err, out)
	}
}

// TestPreviewFixtureGolden previews every VM of the simulated cloud's
// example fixture; the output is testdata/preview-example.golden
// (go test -run TestPreviewFixtureGolden -update rewrites it).
func TestPreviewFixtureGolden(t *testing.T) {
	cfg := previewConfig(t)
	var out bytes.Buffer
	args := []string{"-config", cfg, "preview", "--now", "2026-03-01T12:00:00Z", "../../mockcloud/testdata/example.json"}
	if err := run(context.Background(), args, &out, &out); err != nil {
		t.Fatalf("%v\n%s", err, out.String())
	}
	golden(t, "preview-example.golden", out.String())
}

// golden compares got with testdata/name, which -update rewrites.
func golden(t *testing.T, name, got string) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if got != string(want) {
		t.Errorf("output differs from %s (go test -run %s -update rewrites it):\n%s", path, t.Name(), got)
	}
}
