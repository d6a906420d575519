package main

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestStartWithTokenFile: cnsd refuses to start on a token file open to
// others, naming it, and creates none when the API is open.
func TestStartWithTokenFile(t *testing.T) {
	tests := []struct {
		name, api   string
		file        string // content written beside the store, mode 0644, when set
		wantErr     string
		wantCreated bool
	}{
		{name: "open to others", api: `{}`, file: "t0ken\n", wantErr: "mode 0644"},
		{name: "auth none creates nothing", api: `{"auth": "none"}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			tokenFile := filepath.Join(dir, "api.token")
			if tt.file != "" {
				if err := os.WriteFile(tokenFile, []byte(tt.file), 0o644); err != nil {
					t.Fatal(err)
				}
				if err := os.Chmod(tokenFile, 0o644); err != nil {
					t.Fatal(err)
				}
			}
			ports := freePorts(t, 2)
			cfg := fmt.Sprintf(`{"my_name": "ns1.example.test", "hostmaster": "hostmaster@example.test",
  "forward_zones": {"a.example.test": {"networks": ["*"]}}, "store": {"path": %q},
  "dns": {"listen": ["127.0.0.1:%d"]}, "api": %s}`, filepath.Join(dir, "cnsd.db"), ports[0], tt.api)
			cfg = strings.Replace(cfg, `"api": {`, fmt.Sprintf(`"api": {"listen": "127.0.0.1:%d", `, ports[1]), 1)
			cfg = strings.Replace(cfg, ", }", "}", 1)
			path := filepath.Join(dir, "cnsd.json")
			if err := os.WriteFile(path, []byte(cfg), 0o644); err != nil {
				t.Fatal(err)
			}
			ctx, cancel := context.WithCancel(context.Background())
			defer time.AfterFunc(500*time.Millisecond, cancel).Stop() // a start that works runs until then
			err := run(ctx, []string{"-config", path}, &bytes.Buffer{}, &bytes.Buffer{})
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) || !strings.Contains(err.Error(), tokenFile) {
					t.Fatalf("run: %v, want an error naming %s and %q", err, tokenFile, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("run: %v", err)
			}
			if _, err := os.Stat(tokenFile); err == nil {
				t.Errorf("%s created with auth none", tokenFile)
			}
		})
	}
}
