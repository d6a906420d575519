package main

import (
	"bytes"
	"context"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/")

// TestPreviewInputs: preview takes a view, a bare VMAPI VM (with the
// owner and networks it lacks assumed, and said so) and a whole cloud
// fixture (taken as it is); anything else is refused with what it wants.
func TestPreviewInputs(t *testing.T) {
	dir := t.TempDir()
	cfg := filepath.Join(dir, "cnsd.json")
	if err := os.WriteFile(cfg, []byte(`{"my_name": "ns1.example.test", "hostmaster": "hostmaster@example.test",
  "forward_zones": {"cloud.example.test": {"networks": ["*"]}}}`), 0o644); err != nil {
		t.Fatal(err)
	}
	const vm = `{"uuid": "00000001-0000-4000-8000-000000000001", "owner_uuid": "a11ce000-0000-4000-8000-000000000001",
  "state": "running", "tags": {"triton.cns.services": "web:80"},
  "nics": [{"ip": "192.0.2.11", "network_uuid": "e0000000-0000-4000-8000-00000000000e", "nic_tag": "external"}]}`
	const inst = "00000001-0000-4000-8000-000000000001.inst.a11ce000-0000-4000-8000-000000000001.cloud.example.test.\tA\t192.0.2.11"
	tests := []struct {
		name, input string
		wantErr     bool
		want        []string
		dontWant    []string
	}{
		{"bare VM", vm, false, []string{"; assumed: VM 00000001", "owner a11ce000-0000-4000-8000-000000000001 not given",
			"network e0000000-0000-4000-8000-00000000000e not given", inst, "web.svc.a11ce000"}, nil},
		{"view with owner and network", `{"vm": ` + vm + `, "owner": {"uuid": "a11ce000-0000-4000-8000-000000000001", "login": "alice",
  "triton_cns_enabled": "false"}, "networks": {"e0000000-0000-4000-8000-00000000000e": {"uuid": "e0000000-0000-4000-8000-00000000000e", "name": "external"}}}`,
			false, []string{"instance no", "user_en_flag"}, []string{"assumed", inst}},
		{"fixture lacking the owner", `{"vms": [` + vm + `], "users": [], "networks": []}`,
			false, []string{"unresolved yes"}, []string{"assumed", inst}},
		{"not JSON", `vm`, true, []string{"not a JSON object"}, nil},
		{"something else", `{"name": "web"}`, true, []string{`{"vm": …}`, `{"uuid": …}`, `{"vms": […]}`}, nil},
		{"a view whose vm is not an object", `{"vm": 3}`, true, []string{`a VM view (it has "vm")`}, nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			in := filepath.Join(dir, strings.ReplaceAll(tc.name, " ", "_")+".json")
			if err := os.WriteFile(in, []byte(tc.input), 0o644); err != nil {
				t.Fatal(err)
			}
			var out bytes.Buffer
			err := run(context.Background(), []string{"-config", cfg, "preview", in}, &out, &out)
			if (err != nil) != tc.wantErr {
				t.Fatalf("preview: %v, want error %v\n%s", err, tc.wantErr, out.String())
			}
			got := out.String()
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

// TestPreviewFixtureGolden previews every VM of the simulated cloud's
// example fixture; the output is testdata/preview-example.golden
// (go test -run TestPreviewFixtureGolden -update rewrites it).
func TestPreviewFixtureGolden(t *testing.T) {
	cfg := previewConfig(t)
	now = func() time.Time { return mustTime("2026-03-01T12:00:00Z") }
	t.Cleanup(func() { now = time.Now })
	var out bytes.Buffer
	if err := run(context.Background(), []string{"-config", cfg, "preview", "../../mockcloud/testdata/example.json"}, &out, &out); err != nil {
		t.Fatalf("%v\n%s", err, out.String())
	}
	golden := filepath.Join("testdata", "preview-example.golden")
	if *update {
		if err := os.MkdirAll("testdata", 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(golden, out.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatal(err)
	}
	if out.String() != string(want) {
		t.Errorf("preview of the example cloud differs from %s:\n%s", golden, out.String())
	}
}
