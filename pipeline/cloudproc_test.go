package pipeline

import (
	"bufio"
	"encoding/json"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/cnsd/cnsd/logtest"
	"github.com/cnsd/cnsd/mockcloud"
	"github.com/cnsd/cnsd/subproc"
)

// newCloudProcess starts the simulated cloud over fixture f in a
// process of its own (cmd/mockcloud, built for the test, with slapd for
// UFDS), as cnsd meets a cloud in production: on other machines, so
// that the cloud's work and garbage are not cnsd's. The world it returns
// has no Cloud to change: the cloud is only reachable over its APIs.
func newCloudProcess(t testing.TB, f *mockcloud.Fixture) *world {
	t.Helper()
	dir := t.TempDir()
	bin, fixture := filepath.Join(dir, "mockcloud"), filepath.Join(dir, "fixture.json")
	if out, err := exec.Command("go", "build", "-o", bin, "github.com/cnsd/cnsd/cmd/mockcloud").CombinedOutput(); err != nil {
		t.Fatalf("go build mockcloud: %v\n%s", err, out)
	}
	b, err := json.Marshal(f)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(fixture, b, 0o600); err != nil {
		t.Fatal(err)
	}
	logs, err := os.Create(filepath.Join(dir, "mockcloud.log"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { logs.Close() })
	cmd := exec.Command(bin, "-fixture", fixture, "-listen", "127.0.0.1:0", "-ufds", "127.0.0.1:0")
	cmd.SysProcAttr = subproc.Attr()
	cmd.Stderr = logs
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cmd.Process.Signal(syscall.SIGTERM)
		done := make(chan struct{})
		go func() { cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			cmd.Process.Kill()
			<-done
		}
	})
	w := &world{t: t, logs: &logtest.Buffer{}, clock: &clock{t: time.Now()}, level: slog.LevelDebug, limit: waitLimit,
		cloudPID: cmd.Process.Pid}
	sc := bufio.NewScanner(stdout)
	for (w.url == "" || w.ldapURL == "") && sc.Scan() {
		switch fs := strings.Fields(sc.Text()); {
		case len(fs) >= 2 && fs[0] == "VMAPI":
			w.url = strings.TrimSuffix(fs[1], "/vms")
		case len(fs) >= 2 && fs[0] == "UFDS":
			w.ldapURL = fs[1]
		}
	}
	if w.url == "" || w.ldapURL == "" {
		log, _ := os.ReadFile(logs.Name())
		t.Fatalf("mockcloud printed no VMAPI or UFDS URL:\n%s", log)
	}
	go io.Copy(io.Discard, stdout)
	return w
}
