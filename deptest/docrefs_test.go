package deptest

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// outsideDocs are documents the team keeps outside the repository. A
// reader of the repository cannot open them, so no tracked file may cite
// them: the facts they hold belong in docs/. The names are split so that
// this file does not cite them either.
var outsideDocs = []string{"DESIGN" + ".md", "STYLE" + ".md"}

// docPath matches a path to a document under docs/.
var docPath = regexp.MustCompile(`\bdocs/[A-Za-z0-9_-]+\.md\b`)

// TestDocReferences: no tracked file cites a document that is not in the
// repository, neither one of outsideDocs nor a docs/*.md that does not
// exist.
func TestDocReferences(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Fatal("TestDocReferences lists the tracked files with git: install it (Debian: git)")
	}
	cmd := exec.Command("git", "-C", "..", "ls-files", "-z")
	cmd.Env = gitEnv()
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("git ls-files: %v", err)
	}
	files := strings.Split(strings.TrimRight(string(out), "\x00"), "\x00")
	if len(files) < 10 {
		t.Fatalf("git ls-files lists %d files: not the repository?", len(files))
	}
	for _, f := range files {
		data, err := os.ReadFile(filepath.Join("..", filepath.FromSlash(f)))
		if err != nil {
			if os.IsNotExist(err) {
				continue // deleted in the work tree, not committed yet
			}
			t.Fatal(err)
		}
		if bytes.IndexByte(data, 0) >= 0 {
			continue // binary
		}
		for i, line := range strings.Split(string(data), "\n") {
			for _, doc := range outsideDocs {
				if strings.Contains(line, doc) {
					t.Errorf("%s:%d cites %s, which is not in the repository: cite the doc in docs/ that holds the fact", f, i+1, doc)
				}
			}
			for _, ref := range docPath.FindAllString(line, -1) {
				if _, err := os.Stat(filepath.Join("..", filepath.FromSlash(ref))); err != nil {
					t.Errorf("%s:%d cites %s, which does not exist", f, i+1, ref)
				}
			}
		}
	}
}
