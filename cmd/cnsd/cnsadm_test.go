package main

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cnsd/cnsd/mockcloud"
)

// TestCnsadmOverCloud runs every cnsadm command, as the operator would
// (the built binary), against a cnsd running over the simulated cloud.
// Configuration edits go to cnsd's file, and cnsd applies them.
func TestCnsadmOverCloud(t *testing.T) {
	// No token in the file: cnsd creates its token file beside the store,
	// and cnsadm finds it through -config.
	c := startOverMockWith(t, mockcloud.New(cloudFixture(), nil), `"cloud.example.test": {"networks": ["*"]}`,
		func(c *overCloud) { c.token = "" })
	cnsadm := cnsadmFor(t, c)
	tokenFile := filepath.Join(filepath.Dir(c.config), "api.token")
	waitFor(t, "the log line naming the new token file", func() bool {
		return strings.Contains(c.stderr.String(), "created the API token") && strings.Contains(c.stderr.String(), tokenFile)
	})
	// The simulated cloud as a fixture file: preview computes from it what
	// the running cnsd publishes.
	cloudFile := filepath.Join(t.TempDir(), "cloud.json")
	fixture, err := json.Marshal(c.cloud.Fixture())
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(cloudFile, fixture, 0o644); err != nil {
		t.Fatal(err)
	}
	inst := cloudVM + ".inst." + cloudOwner + ".cloud.example.test"
	waitFor(t, "the VM's name", func() bool { return answers(c.dns, inst+".", "192.0.2.11") })
	view := filepath.Join(t.TempDir(), "view.json")
	if err := os.WriteFile(view, []byte(`{"vm": {"uuid": "`+cloudVM+`", "owner_uuid": "`+cloudOwner+`", "state": "running",
  "nics": [{"ip": "192.0.2.11", "network_uuid": "`+cloudNet+`"}]},
  "owner": {"uuid": "`+cloudOwner+`", "login": "alice", "triton_cns_enabled": "true", "approved_for_provisioning": "true"},
  "networks": {"`+cloudNet+`": {"uuid": "`+cloudNet+`", "name": "external"}}}`), 0o644); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		args    []string
		wantErr bool
		want    []string
	}{
		{[]string{"status"}, false, []string{"cloud.example.test", "2.0.192.in-addr.arpa", "SECONDARY"}},
		{[]string{"-j", "status"}, false, []string{`"zones"`}},
		{[]string{"vm", cloudVM}, false, []string{inst, "instance names published: yes", "service web (ports [])"}},
		{[]string{"peers"}, false, []string{"SECONDARY"}},
		{[]string{"peers", "show", "192.0.2.99"}, true, []string{"404"}},
		{[]string{"confirm", "re-list"}, true, []string{"404"}},
		{[]string{"zones"}, false, []string{"cloud.example.test", "*"}},
		{[]string{"zones", "show", "cloud.example.test"}, false, []string{`"networks": ["*"]`}},
		{[]string{"zones", "add", "ext.example.test", "networks=" + cloudNet}, false, []string{"wrote"}},
		{[]string{"zones", "edit", "ext.example.test", "peers+=192.0.2.53"}, false, []string{"wrote"}},
		{[]string{"zones", "add", "bad.example.test", "networks=*"}, true, []string{"second catch-all"}},
		{[]string{"zones", "add", "tmp.example.test", "networks=" + cloudNet}, false, []string{"wrote"}},
		{[]string{"zones", "rename", "tmp.example.test", "tmp2.example.test"}, false, []string{"wrote"}},
		{[]string{"zones", "show", "tmp2.example.test"}, false, []string{cloudNet}},
		{[]string{"zones", "remove", "tmp2.example.test"}, false, []string{"wrote"}},
		{[]string{"zones", "show", "tmp2.example.test"}, true, []string{"tmp2.example.test"}},
		{[]string{"config", "edit", "use_alias=true"}, false, []string{"wrote"}},
		{[]string{"config", "show"}, false, []string{`"use_alias": true`, `"ext.example.test"`}},
		{[]string{"upgrade", "-n"}, false, []string{`"forward_zones"`}},
		{[]string{"upgrade"}, false, nil},
		// The network now has a zone of its own, which wins over the catch-all.
		{[]string{"preview", view}, false, []string{cloudVM + ".inst." + cloudOwner + ".ext.example.test.\t30\tA\t192.0.2.11"}},
		{[]string{"preview", cloudFile}, false, []string{"VM " + cloudVM + ": instance yes",
			cloudVM + ".inst." + cloudOwner + ".ext.example.test.\t30\tA\t192.0.2.11"}},
		{[]string{"bind-config"}, false, []string{`zone "cloud.example.test"`, "primaries { 127.0.0.1 port"}},
		{[]string{"bind-config", "-catalog"}, false, []string{"catalog-zones"}},
		{[]string{"help", "vm"}, false, []string{"NAME", "EXAMPLES"}},
	}
	for _, tc := range tests {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			out, err := cnsadm(tc.args...)
			if (err != nil) != tc.wantErr {
				t.Fatalf("cnsadm %q: %v, want error %v\n%s", tc.args, err, tc.wantErr, out)
			}
			for _, w := range tc.want {
				if !strings.Contains(out, w) {
					t.Errorf("cnsadm %q lacks %q:\n%s", tc.args, w, out)
				}
			}
		})
	}
	// The zone added through cnsadm is served, with the VM in it.
	waitFor(t, "the VM in the zone cnsadm added", func() bool {
		return answers(c.dns, cloudVM+".inst."+cloudOwner+".ext.example.test.", "192.0.2.11")
	})
	out, _ := cnsadm("zones")
	if !strings.Contains(out, "ext.example.test") || !strings.Contains(out, "192.0.2.53") {
		t.Errorf("zones after the edits:\n%s", out)
	}
}

// cnsadmFor builds the cnsadm binary and returns a function that runs it
// against c's API and configuration file, returning its combined output.
func cnsadmFor(t *testing.T, c *overCloud) func(args ...string) (string, error) {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "cnsadm")
	if out, err := exec.Command("go", "build", "-o", bin, "../cnsadm").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	return func(args ...string) (string, error) {
		cmd := exec.Command(bin, append([]string{"-api", c.api, "-config", c.config, "-no-resolve"}, args...)...)
		out, err := cmd.CombinedOutput()
		return string(out), err
	}
}
