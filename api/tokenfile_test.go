package api

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestEnsureTokenFile: the first call creates a random token only the
// owner may read, later calls read the same one.
func TestEnsureTokenFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "api.token")
	token, created, err := EnsureTokenFile(path)
	if err != nil || !created || len(token) != 64 {
		t.Fatalf("first call: %q %v %v, want a new 64-digit token", token, created, err)
	}
	fi, err := os.Stat(path)
	if err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("token file: %v %v, want mode 0600", fi.Mode(), err)
	}
	again, created, err := EnsureTokenFile(path)
	if err != nil || created || again != token {
		t.Fatalf("second call: %q %v %v, want the same token read back", again, created, err)
	}
	other, _, err := EnsureTokenFile(filepath.Join(t.TempDir(), "api.token"))
	if err != nil || other == token {
		t.Fatalf("another file: %q %v, want another token", other, err)
	}
}

// TestReadTokenFileRefuses files that are open to others or hold no
// token, naming the file.
func TestReadTokenFileRefuses(t *testing.T) {
	tests := []struct {
		name    string
		content string
		mode    os.FileMode
		want    string
		is      error
	}{
		{"group readable", "t0ken\n", 0o640, "mode 0640", ErrTokenFileOpen},
		{"world readable", "t0ken\n", 0o604, "mode 0604", ErrTokenFileOpen},
		{"group writable", "t0ken\n", 0o620, "mode 0620", ErrTokenFileOpen},
		{"empty", "\n", 0o600, "must hold one token on one line", nil},
		{"two words", "a b\n", 0o600, "must hold one token on one line", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "api.token")
			if err := os.WriteFile(path, []byte(tt.content), tt.mode); err != nil {
				t.Fatal(err)
			}
			if err := os.Chmod(path, tt.mode); err != nil { // past the umask
				t.Fatal(err)
			}
			_, err := ReadTokenFile(path)
			if err == nil || !strings.Contains(err.Error(), path) || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("error %v, want one naming %s and saying %q", err, path, tt.want)
			}
			if tt.is != nil && !errors.Is(err, tt.is) {
				t.Fatalf("error %v does not wrap %v", err, tt.is)
			}
			if _, _, err := EnsureTokenFile(path); err == nil {
				t.Fatal("EnsureTokenFile accepted the file")
			}
		})
	}
}

// TestEnsureTokenFileCannotCreate names the setting to change.
func TestEnsureTokenFileCannotCreate(t *testing.T) {
	path := filepath.Join(t.TempDir(), "missing", "api.token")
	_, _, err := EnsureTokenFile(path)
	if err == nil || !strings.Contains(err.Error(), "api.token_file") || !strings.Contains(err.Error(), path) {
		t.Fatalf("error %v, want one naming %s and api.token_file", err, path)
	}
}
