package zonegen

import (
	"bufio"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// nodeDir is where the node scripts of the tests against Triton's own
// code and their npm packages are.
var nodeDir = filepath.Join("testdata", "tritoncns")

// runNode runs script (in nodeDir, its packages on NODE_PATH, env added)
// with each of inputs as a JSON line on stdin, and returns its output
// lines, one an input.
func runNode(t *testing.T, script string, env []string, inputs []any) [][]byte {
	t.Helper()
	here, err := filepath.Abs(nodeDir)
	if err != nil {
		t.Fatal(err)
	}
	var in strings.Builder
	for _, x := range inputs {
		b, err := json.Marshal(x)
		if err != nil {
			t.Fatal(err)
		}
		in.Write(b)
		in.WriteByte('\n')
	}
	cmd := exec.Command("node", filepath.Join(here, script))
	cmd.Env = append(append(os.Environ(), "NODE_PATH="+filepath.Join(here, "node_modules")), env...)
	cmd.Stdin = strings.NewReader(in.String())
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("node %s: %v\n%s", script, err, stderr.String())
	}
	var lines [][]byte
	sc := bufio.NewScanner(strings.NewReader(string(out)))
	sc.Buffer(nil, 1<<24)
	for sc.Scan() {
		lines = append(lines, []byte(sc.Text()))
	}
	if len(lines) != len(inputs) {
		t.Fatalf("%s answered %d of %d lines\n%s", script, len(lines), len(inputs), stderr.String())
	}
	return lines
}
