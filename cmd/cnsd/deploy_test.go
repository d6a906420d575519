package main

import (
	"bufio"
	"encoding/xml"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/cnsd/cnsd/schema"
)

// TestDeployFiles checks what an operator installs from deploy/: the
// example configuration is valid and names every cloud API, and the
// service definitions start cnsd with a configuration file.
func TestDeployFiles(t *testing.T) {
	cfg, err := schema.Load("../../deploy/cnsd.example.json")
	if err != nil {
		t.Fatalf("example configuration: %v", err)
	}
	if ok, err := cloudConfigured(cfg); !ok || err != nil {
		t.Errorf("example configuration does not name every cloud API: %v", err)
	}

	unit := readLines(t, "../../deploy/systemd/cnsd.service")
	if !slices.Contains(unit, "ExecStart=/usr/local/bin/cnsd -config /etc/cnsd/cnsd.json") || !slices.Contains(unit, "ExecReload=/bin/kill -HUP $MAINPID") {
		t.Errorf("systemd unit does not start cnsd with its configuration and reload it with SIGHUP")
	}

	data, err := os.ReadFile("../../deploy/smf/cnsd.xml")
	if err != nil {
		t.Fatal(err)
	}
	var manifest struct {
		Service struct {
			Name    string `xml:"name,attr"`
			Methods []struct {
				Name string `xml:"name,attr"`
				Exec string `xml:"exec,attr"`
			} `xml:"exec_method"`
			Credential struct {
				User       string `xml:"user,attr"`
				Privileges string `xml:"privileges,attr"`
			} `xml:"method_context>method_credential"`
		} `xml:"service"`
	}
	d := xml.NewDecoder(strings.NewReader(string(data)))
	d.Strict = true
	if err := d.Decode(&manifest); err != nil {
		t.Fatalf("SMF manifest is not well-formed XML: %v", err)
	}
	methods := map[string]string{}
	for _, m := range manifest.Service.Methods {
		methods[m.Name] = m.Exec
	}
	if manifest.Service.Name != "network/dns/cnsd" || !strings.Contains(methods["start"], "cnsd -config") || methods["refresh"] != ":kill -HUP" {
		t.Errorf("SMF manifest: service %q, methods %v", manifest.Service.Name, methods)
	}
	if c := manifest.Service.Credential; c.User == "" || c.User == "root" || c.Privileges != "basic,net_privaddr" {
		t.Errorf("SMF manifest runs as user %q with privileges %q, want an unprivileged user with basic,net_privaddr", c.User, c.Privileges)
	}
	for _, l := range cfg.DNS.Listen {
		if h, _, _ := strings.Cut(l, "]:"); strings.HasPrefix(l, "0.0.0.0:") || h == "[::" {
			t.Errorf("example configuration listens for DNS on the wildcard %s", l)
		}
	}
}

// TestSystemdUnitHardened: the unit runs cnsd as an unprivileged user of
// its own with only the port-53 capability and the usual sandboxing, and
// systemd-analyze verify finds nothing to say about it (the binary is
// replaced by one that exists here, since verify checks ExecStart's).
func TestSystemdUnitHardened(t *testing.T) {
	unit := readLines(t, "../../deploy/systemd/cnsd.service")
	for _, want := range []string{"DynamicUser=yes", "AmbientCapabilities=CAP_NET_BIND_SERVICE",
		"CapabilityBoundingSet=CAP_NET_BIND_SERVICE", "NoNewPrivileges=yes", "ProtectSystem=strict",
		"ReadWritePaths=/var/lib/cnsd", "PrivateTmp=yes", "ProtectHome=yes", "PrivateDevices=yes",
		"RestrictAddressFamilies=AF_INET AF_INET6 AF_UNIX", "SystemCallFilter=@system-service"} {
		if !slices.Contains(unit, want) {
			t.Errorf("systemd unit lacks %q", want)
		}
	}
	analyze, err := exec.LookPath("systemd-analyze")
	if err != nil {
		t.Fatal("systemd-analyze not found: install the Debian package systemd (scripts/testdeps.sh)")
	}
	path := filepath.Join(t.TempDir(), "cnsd.service")
	text := strings.ReplaceAll(strings.Join(unit, "\n"), "/usr/local/bin/cnsd", "/bin/true")
	if err := os.WriteFile(path, []byte(text+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(analyze, "verify", path).CombinedOutput()
	if err != nil || len(strings.TrimSpace(string(out))) > 0 {
		t.Errorf("systemd-analyze verify: %v\n%s", err, out)
	}
}

func readLines(t *testing.T, path string) []string {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []string
	for s := bufio.NewScanner(f); s.Scan(); {
		out = append(out, strings.TrimSpace(s.Text()))
	}
	return out
}
