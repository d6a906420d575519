package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/cnsd/cnsd/logtest"
)

// logDaemon is a cnsd on the embedded store whose configuration the test
// rewrites; stderr is its log.
type logDaemon struct {
	cfgPath string
	stderr  *logtest.Buffer
	write   func(extra string)
}

// startLogDaemon runs cnsd with args after -config and the top-level
// members extra (",\"key\": …") in its configuration.
func startLogDaemon(t *testing.T, extra string, args ...string) *logDaemon {
	t.Helper()
	dir := t.TempDir()
	ports := freePorts(t, 2)
	d := &logDaemon{cfgPath: filepath.Join(dir, "cnsd.json"), stderr: &logtest.Buffer{}}
	d.write = func(extra string) {
		doc := fmt.Sprintf(daemonConfig, `"a.example.test": {"networks": ["*"]}`, filepath.Join(dir, "cnsd.db"), ports[0], ports[1])
		doc = strings.TrimSuffix(doc, "}") + extra + "}"
		// Renamed into place, so that cnsd never reads half a file.
		if err := os.WriteFile(d.cfgPath+".new", []byte(doc), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.Rename(d.cfgPath+".new", d.cfgPath); err != nil {
			t.Fatal(err)
		}
	}
	d.write(extra)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		done <- run(ctx, append([]string{"-config", d.cfgPath}, args...), &bytes.Buffer{}, d.stderr)
	}()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("cnsd: %v\n%s", err, d.stderr.String())
		}
	})
	waitFor(t, "the SOA of a.example.test", func() bool { return soa(fmt.Sprintf("127.0.0.1:%d", ports[0]), "a.example.test.") })
	return d
}

// reload writes the configuration with extra and sends SIGHUP.
func (d *logDaemon) reload(t *testing.T, extra string) {
	t.Helper()
	d.write(extra)
	if err := syscall.Kill(os.Getpid(), syscall.SIGHUP); err != nil {
		t.Fatal(err)
	}
}

// TestLogLevelFromConfig: log.level warn hides info lines; a reload to
// info applies at once (the reload's own line shows) and logs the change;
// log.format json writes one JSON object a line.
func TestLogLevelFromConfig(t *testing.T) {
	d := startLogDaemon(t, `, "log": {"level": "warn", "format": "json"}`)
	if lines := d.stderr.Lines("cnsd running"); len(lines) != 0 {
		t.Errorf("an info line at level warn: %q", lines)
	}
	d.reload(t, `, "log": {"level": "info", "format": "json"}`)
	waitFor(t, "the reload at level info", func() bool { return len(d.stderr.Lines("configuration reloaded")) > 0 })
	if lines := d.stderr.Lines("log level changed", `"from":"WARN"`, `"to":"INFO"`); len(lines) != 1 {
		t.Errorf("log level change lines %q in\n%s", lines, d.stderr.String())
	}
	for l := range strings.Lines(d.stderr.String()) {
		var v map[string]any
		if err := json.Unmarshal([]byte(l), &v); err != nil {
			t.Errorf("log line is not JSON (%v): %s", err, l)
		}
	}
	if lines := d.stderr.Lines(`"level":"DEBUG"`); len(lines) != 0 {
		t.Errorf("debug lines at level info: %q", lines)
	}
}

// TestLogLevelFlag: -log-level overrides log.level at start and on every
// reload.
func TestLogLevelFlag(t *testing.T) {
	d := startLogDaemon(t, `, "log": {"level": "debug"}`, "-log-level", "warn")
	d.reload(t, `, "log": {"level": "debug"}, "use_alias": true`)
	d.reload(t, `, "use_alias": 1`) // refused: an error line shows the reloads were read
	waitFor(t, "the refused reload", func() bool { return len(d.stderr.Lines("configuration not reloaded")) > 0 })
	for _, msg := range []string{"cnsd running", "configuration reloaded", "level=DEBUG", "level=INFO"} {
		if lines := d.stderr.Lines(msg); len(lines) != 0 {
			t.Errorf("%q logged at -log-level warn: %q", msg, lines)
		}
	}
}

// TestReloadReportsEveryError: a reload of a file with three mistakes
// names all three in its one line.
func TestReloadReportsEveryError(t *testing.T) {
	d := startLogDaemon(t, "")
	d.reload(t, `, "ttl": {"record": 0}, "log": {"level": "verbose"}, "use_alias": "yes"`)
	waitFor(t, "the refused reload", func() bool { return len(d.stderr.Lines("configuration not reloaded")) > 0 })
	line := d.stderr.Lines("configuration not reloaded")[0]
	for _, want := range []string{"problems=3", "3 problems", `ttl.record: must be at least 1, got 0`,
		`log.level: must be one of \"debug\", \"info\", \"warn\", \"error\", got \"verbose\"`,
		`use_alias: must be a boolean, got \"yes\"`} {
		if !strings.Contains(line, want) {
			t.Errorf("reload error line lacks %q:\n%s", want, line)
		}
	}
}

// TestStartReportsEveryError: cnsd refuses to start on a file with three
// mistakes and names all three.
func TestStartReportsEveryError(t *testing.T) {
	path := filepath.Join(t.TempDir(), "cnsd.json")
	doc := `{"my_name": "ns1.example.test", "hostmaster": "hostmaster@example.test",
  "forward_zones": {"a.example.test": {"networks": ["*"]}},
  "ttl": {"record": 0}, "log": {"format": "logfmt"}, "use_alias": "yes"}`
	if err := os.WriteFile(path, []byte(doc), 0o644); err != nil {
		t.Fatal(err)
	}
	err := run(context.Background(), []string{"-config", path}, &bytes.Buffer{}, &bytes.Buffer{})
	if err == nil {
		t.Fatal("cnsd started with an invalid configuration")
	}
	for _, want := range []string{"3 problems", "ttl.record", `log.format: must be one of "text", "json", got "logfmt"`, "use_alias"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error lacks %q: %v", want, err)
		}
	}
}
