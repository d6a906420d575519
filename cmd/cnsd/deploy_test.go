package main

import (
	"bufio"
	"encoding/xml"
	"os"
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
