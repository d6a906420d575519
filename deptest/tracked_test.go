package deptest

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// checkTracked is the script `make lint` runs, from this directory.
const checkTracked = "../scripts/check-tracked.sh"

// A trackedFile is a file committed to a test repository.
type trackedFile struct {
	path string
	data []byte
	exec bool
}

// elfHeader and machoHeader start a 64-bit Linux and macOS executable.
var (
	elfHeader   = append([]byte("\x7fELF\x02\x01\x01\x00"), make([]byte, 56)...)
	machoHeader = append([]byte("\xcf\xfa\xed\xfe\x07\x00\x00\x01"), make([]byte, 24)...)
)

// TestCheckTracked: scripts/check-tracked.sh fails, naming each file, on a
// repository that tracks an executable binary or a file over 1 MiB, and
// passes executable scripts, small binaries without the executable bit and
// the exceptions of its allow-list.
func TestCheckTracked(t *testing.T) {
	for _, tool := range []string{"git", "bash", "iconv"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Fatalf("scripts/check-tracked.sh needs %s: install it (Debian: git, bash, libc-bin)", tool)
		}
	}
	script := []byte("#!/bin/sh\necho hello\n")
	big := bytes.Repeat([]byte("0123456789abcdef\n"), 2<<20/17+1) // 2 MiB of text
	tests := []struct {
		name  string
		files []trackedFile
		bad   []string // the files the script must name; none: it passes
	}{
		{name: "clean", files: []trackedFile{
			{path: "run.sh", data: script, exec: true},
			{path: "README", data: []byte("hello\n")},
			{path: "testdata/blob.bin", data: elfHeader}, // data, not executable
		}},
		{name: "committed ELF binary", files: []trackedFile{
			{path: "run.sh", data: script, exec: true},
			{path: "cnsd", data: elfHeader, exec: true},
		}, bad: []string{"cnsd"}},
		{name: "committed Mach-O binary", files: []trackedFile{
			{path: "bin/cnsadm", data: machoHeader, exec: true},
		}, bad: []string{"bin/cnsadm"}},
		{name: "executable not UTF-8", files: []trackedFile{
			{path: "tool", data: []byte("#!\xff\xfe\n"), exec: true},
		}, bad: []string{"tool"}},
		{name: "2 MiB file", files: []trackedFile{
			{path: "dump/zone.txt", data: big},
		}, bad: []string{"dump/zone.txt"}},
		{name: "both", files: []trackedFile{
			{path: "a b/big file", data: big},
			{path: "mockcloud", data: elfHeader, exec: true},
		}, bad: []string{"a b/big file", "mockcloud"}},
		{name: "allowed", files: []trackedFile{
			{path: "testdata/big.txt", data: big},
			{path: "scripts/check-tracked.allow", data: []byte("# the fixture is that large on purpose\ntestdata/big.txt\n")},
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out, err := runCheckTracked(t, gitRepo(t, tt.files))
			if len(tt.bad) == 0 {
				if err != nil {
					t.Fatalf("%v, want it to pass:\n%s", err, out)
				}
				return
			}
			if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 1 {
				t.Fatalf("%v, want exit status 1:\n%s", err, out)
			}
			for _, path := range tt.bad {
				if !strings.Contains(out, "check-tracked: "+path+": ") {
					t.Errorf("the output does not name %s:\n%s", path, out)
				}
			}
			if n := strings.Count(out, "git rm --cached"); n != len(tt.bad) {
				t.Errorf("%d files named, want %d:\n%s", n, len(tt.bad), out)
			}
		})
	}
}

// TestRepositoryTracksNoBinaries: this repository passes its own check.
func TestRepositoryTracksNoBinaries(t *testing.T) {
	if out, err := runCheckTracked(t, ".."); err != nil {
		t.Fatalf("%v:\n%s", err, out)
	}
}

// runCheckTracked runs the script on the repository at dir.
func runCheckTracked(t *testing.T, dir string) (string, error) {
	t.Helper()
	cmd := exec.Command("bash", checkTracked, dir)
	cmd.Env = gitEnv()
	out, err := cmd.CombinedOutput()
	return string(out), err
}

// gitRepo commits files to a new repository and returns its directory.
func gitRepo(t *testing.T, files []trackedFile) string {
	t.Helper()
	dir := t.TempDir()
	git := func(args ...string) {
		t.Helper()
		cmd := exec.Command("git", append([]string{"-C", dir, "-c", "user.name=t", "-c", "user.email=t@example.com"}, args...)...)
		cmd.Env = gitEnv()
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, out)
		}
	}
	git("init", "-q")
	for _, f := range files {
		p := filepath.Join(dir, filepath.FromSlash(f.path))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		mode := os.FileMode(0o644)
		if f.exec {
			mode = 0o755
		}
		if err := os.WriteFile(p, f.data, mode); err != nil {
			t.Fatal(err)
		}
	}
	git("add", "-A")
	git("commit", "-q", "-m", "files")
	return dir
}

// gitEnv is the environment without what would point git elsewhere or
// change how it sees files: no global or system configuration.
func gitEnv() []string {
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "GIT_") {
			env = append(env, kv)
		}
	}
	return append(env, "GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL="+os.DevNull)
}
