package main

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

const baseConfig = `{
  "my_name": "ns1.example.test",
  "hostmaster": "hostmaster@example.test",
  "forward_zones": {
    "b.example.test": {"networks": ["*"]},
    "a.example.test": {"networks": ["1f1b0a8e-0b4e-4f4c-8f0c-5d1b7f2e9a10"], "peers": ["192.0.2.53"]}
  },
  "use_alias": true
}
`

func TestConfigEdits(t *testing.T) {
	tests := []struct {
		name    string
		args    []string
		wantErr string   // the file must then be unchanged
		want    []string // substrings of the file after the edit, in this order
	}{
		{"zone added at the end", []string{"zones", "add", "c.example.test", "networks=5d1b7f2e-0b4e-4f4c-8f0c-1f1b0a8e9a10"}, "",
			[]string{`"b.example.test"`, `"a.example.test"`, `"c.example.test": {`, `"networks": ["5d1b7f2e-0b4e-4f4c-8f0c-1f1b0a8e9a10"]`}},
		{"second catch-all refused", []string{"zones", "add", "c.example.test", "networks=*"}, "second catch-all zone", nil},
		{"zone without networks refused", []string{"zones", "add", "c.example.test", "peers=192.0.2.54"}, "networks", nil},
		{"bad network refused", []string{"zones", "edit", "a.example.test", "networks+=not-a-uuid"}, "not-a-uuid", nil},
		{"peer added", []string{"zones", "edit", "a.example.test", "peers+=192.0.2.54,192.0.2.53"}, "",
			[]string{`"peers": ["192.0.2.53", "192.0.2.54"]`}},
		{"peer removed", []string{"zones", "edit", "a.example.test", "peers-=192.0.2.53"}, "", []string{`"peers": []`}},
		{"removing what is not there", []string{"zones", "edit", "a.example.test", "peers-=192.0.2.99"}, `does not contain "192.0.2.99"`, nil},
		{"hidden primary", []string{"zones", "edit", "a.example.test", "hidden_primary=true"}, "", []string{`"hidden_primary": true`}},
		{"unresolvable secondary", []string{"zones", "edit", "a.example.test", "peers+=ns9.invalid"}, `secondary "ns9.invalid" does not resolve`, nil},
		{"renamed in place", []string{"zones", "rename", "b.example.test", "d.example.test"}, "",
			[]string{`"d.example.test"`, `"a.example.test"`}},
		{"removed", []string{"zones", "remove", "b.example.test"}, "", []string{`"a.example.test"`}},
		{"unknown zone", []string{"zones", "edit", "x.example.test", "peers=192.0.2.1"}, `no "x.example.test"`, nil},
		{"setting", []string{"config", "edit", "use_login=true", "hysteresis.divisor=4"}, "",
			[]string{`"use_login": true`, `"hysteresis": {`, `"divisor": 4`}},
		{"bad setting refused", []string{"config", "edit", "hysteresis.divisor=0"}, "divisor", nil},
		{"unknown setting refused", []string{"config", "edit", "frobnicate=1"}, "frobnicate", nil},
		{"zones not through config", []string{"config", "edit", "forward_zones.a.example.test=1"}, "use cnsadm zones", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "cnsd.json")
			if err := os.WriteFile(path, []byte(baseConfig), 0o640); err != nil {
				t.Fatal(err)
			}
			var stdout, stderr bytes.Buffer
			err := run(context.Background(), append([]string{"-config", path}, tt.args...), &stdout, &stderr)
			data, _ := os.ReadFile(path)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("cnsadm %q = %v, want an error containing %q", tt.args, err, tt.wantErr)
				}
				if string(data) != baseConfig {
					t.Errorf("the file changed although the edit was refused:\n%s", data)
				}
				return
			}
			if err != nil {
				t.Fatalf("cnsadm %q: %v", tt.args, err)
			}
			rest := string(data)
			for _, w := range tt.want {
				i := strings.Index(rest, w)
				if i < 0 {
					t.Fatalf("after cnsadm %q the file lacks %q (in order):\n%s", tt.args, w, data)
				}
				rest = rest[i+len(w):]
			}
			if fi, _ := os.Stat(path); fi.Mode().Perm() != 0o640 {
				t.Errorf("mode %v, want the file's 0640 kept", fi.Mode().Perm())
			}
			var v any
			if err := json.Unmarshal(data, &v); err != nil {
				t.Errorf("the file is not JSON: %v", err)
			}
		})
	}
}

func TestConfigShowAndZonesList(t *testing.T) {
	path := filepath.Join(t.TempDir(), "cnsd.json")
	if err := os.WriteFile(path, []byte(baseConfig), 0o644); err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	if err := run(context.Background(), []string{"-api", "http://127.0.0.1:1", "-config", path, "zones"}, &out, &out); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	if len(lines) != 3 || !strings.HasPrefix(lines[1], "b.example.test") || !strings.Contains(lines[2], "192.0.2.53") {
		t.Errorf("zones list (file order, peers):\n%s", out.String())
	}
	out.Reset()
	if err := run(context.Background(), []string{"-config", path, "config", "show"}, &out, &out); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), `"use_alias": true`) {
		t.Errorf("config show:\n%s", out.String())
	}
}

func TestUpgrade(t *testing.T) {
	path := filepath.Join(t.TempDir(), "config.json")
	old := `{"my_name": "ns1.example.test", "hostmaster": "hostmaster@example.test",
  "dns_zones": {"a.example.test": {"networks": ["*"], "slaves": ["192.0.2.53"], "hidden_master": true}}}`
	if err := os.WriteFile(path, []byte(old), 0o644); err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	if err := run(context.Background(), []string{"-config", path, "upgrade", "-n"}, &out, &out); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), "forward_zones") || !strings.Contains(out.String(), "hidden_primary") {
		t.Errorf("upgrade -n printed:\n%s", out.String())
	}
	if data, _ := os.ReadFile(path); string(data) != old {
		t.Errorf("upgrade -n wrote the file")
	}
	if err := run(context.Background(), []string{"-config", path, "upgrade"}, &out, &out); err != nil {
		t.Fatal(err)
	}
	if data, _ := os.ReadFile(path); !strings.Contains(string(data), `"peers": ["192.0.2.53"]`) || strings.Contains(string(data), "slaves") {
		t.Errorf("upgrade wrote:\n%s", data)
	}
}

// previewConfig writes the configuration the preview tests use (one
// catch-all zone, names by alias and login) and returns its path.
func previewConfig(t *testing.T) string {
	t.Helper()
	cfg := filepath.Join(t.TempDir(), "cnsd.json")
	if err := os.WriteFile(cfg, []byte(`{"my_name": "ns1.example.test", "hostmaster": "hostmaster@example.test",
  "use_alias": true, "use_login": true, "forward_zones": {"dc1.cns.example.com": {"networks": ["*"]}}}`), 0o644); err != nil {
		t.Fatal(err)
	}
	return cfg
}

func TestPreview(t *testing.T) {
	cfg := previewConfig(t)
	var example struct {
		View json.RawMessage `json:"view"`
	}
	data, err := os.ReadFile("../../zonegen/testdata/views/01-design-example.json")
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(data, &example); err != nil {
		t.Fatal(err)
	}
	view := filepath.Join(t.TempDir(), "view.json")
	if err := os.WriteFile(view, example.View, 0o644); err != nil {
		t.Fatal(err)
	}
	now = func() time.Time { return mustTime("2026-11-01T12:00:00Z") }
	t.Cleanup(func() { now = time.Now })
	var out bytes.Buffer
	if err := run(context.Background(), []string{"-config", cfg, "preview", view}, &out, &out); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"instance yes", "service web (ports [80]): listed yes", "; zone dc1.cns.example.com",
		"web0.inst.alice.dc1.cns.example.com.\t30\tA\t", "web.svc.alice.dc1.cns.example.com.\t30\tSRV\t0 10 80 web0.inst.alice.dc1.cns.example.com."} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("preview lacks %q:\n%s", want, out.String())
		}
	}
}

// TestNetworksCheckedWithNAPI: with napi_opts in the file, a network NAPI
// does not know is refused; when NAPI does not answer, the edit is written
// with a warning.
func TestNetworksCheckedWithNAPI(t *testing.T) {
	const known = "1f1b0a8e-0b4e-4f4c-8f0c-5d1b7f2e9a10"
	napi := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/networks/"+known {
			w.Write([]byte(`{"uuid": "` + known + `", "name": "external"}`))
			return
		}
		http.NotFound(w, r)
	}))
	defer napi.Close()
	for _, tt := range []struct {
		name, napiURL, network, wantErr, wantWarning string
	}{
		{"known", napi.URL, known, "", ""},
		{"unknown", napi.URL, "5d1b7f2e-0b4e-4f4c-8f0c-1f1b0a8e9a10", "neither a network nor a network pool in NAPI", ""},
		{"NAPI down", "http://127.0.0.1:1", "5d1b7f2e-0b4e-4f4c-8f0c-1f1b0a8e9a10", "", "networks not checked"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "cnsd.json")
			cfg := strings.Replace(baseConfig, `"use_alias": true`, `"use_alias": true, "napi_opts": {"url": "`+tt.napiURL+`"}`, 1)
			if err := os.WriteFile(path, []byte(cfg), 0o644); err != nil {
				t.Fatal(err)
			}
			var stdout, stderr bytes.Buffer
			err := run(context.Background(), []string{"-config", path, "zones", "edit", "a.example.test", "networks=" + tt.network}, &stdout, &stderr)
			switch {
			case tt.wantErr != "":
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("edit = %v, want %q", err, tt.wantErr)
				}
			case err != nil:
				t.Fatalf("edit: %v", err)
			}
			if !strings.Contains(stderr.String(), tt.wantWarning) {
				t.Errorf("stderr %q, want %q", stderr.String(), tt.wantWarning)
			}
		})
	}
}
