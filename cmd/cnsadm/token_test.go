package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestTokenFromConfig: without -token, cnsadm finds the API token as cnsd
// does from the configuration file (api.token, else api.token_file), and a
// 401 says why it has none.
func TestTokenFromConfig(t *testing.T) {
	url, _, _ := startAPI(t)
	const head = `{"my_name": "ns1.example.test", "hostmaster": "hostmaster@example.test",
  "forward_zones": {"example.test": {"networks": ["*"]}}, `
	tests := []struct {
		name, api   string // api is the configuration's api member
		file        string // content of the token file beside the store
		mode        os.FileMode
		wantErr     string
		noConfigDir bool
	}{
		{name: "token in the configuration", api: `{"token": "s3cret"}`},
		{name: "token file beside the store", api: `{}`, file: "s3cret\n", mode: 0o600},
		{name: "token file named", api: `{"token_file": "secret/t"}`},
		{name: "wrong token", api: `{"token": "nope"}`, wantErr: "401"},
		{name: "token file open to others", api: `{}`, file: "s3cret\n", mode: 0o644, wantErr: "mode 0644"},
		{name: "no token file", api: `{}`, wantErr: "no such file"},
		{name: "auth none sends none", api: `{"auth": "none"}`, wantErr: "401 Unauthorized: a valid bearer token"},
		{name: "no configuration", noConfigDir: true, wantErr: "-config names cnsd's configuration"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			config := filepath.Join(dir, "cnsd.json")
			if !tt.noConfigDir {
				doc := head + `"store": {"path": "` + filepath.Join(dir, "cnsd.db") + `"}, "api": ` + tt.api + `}`
				if err := os.WriteFile(config, []byte(doc), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			if tt.file != "" {
				write(t, filepath.Join(dir, "api.token"), tt.file, tt.mode)
			}
			if strings.Contains(tt.api, "secret/t") {
				if err := os.Mkdir(filepath.Join(dir, "secret"), 0o700); err != nil {
					t.Fatal(err)
				}
				write(t, filepath.Join(dir, "secret", "t"), "s3cret", 0o600)
			}
			t.Setenv("CNSADM_TOKEN", "")
			var stdout bytes.Buffer
			err := run(context.Background(), []string{"-api", url, "-config", config, "status"}, &stdout, &stdout)
			if tt.wantErr == "" && err != nil {
				t.Fatalf("cnsadm status: %v", err)
			}
			if tt.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tt.wantErr)) {
				t.Fatalf("cnsadm status: %v, want an error containing %q", err, tt.wantErr)
			}
		})
	}
}

func write(t *testing.T, path, content string, mode os.FileMode) {
	t.Helper()
	if err := os.WriteFile(path, []byte(content), mode); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(path, mode); err != nil {
		t.Fatal(err)
	}
}
