package main

import (
	"bytes"
	"context"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// freePorts returns n distinct ports of 127.0.0.1, each free for TCP and
// UDP when asked. All are held until the last is chosen: closed one by
// one, the kernel handed the same port out twice and the demo's cloud and
// its UFDS were told to share one. Another process may still take a port
// before the demo binds it, which only makes the test fail, never pass
// wrongly.
func freePorts(t *testing.T, n int) []int {
	t.Helper()
	var ports []int
	for len(ports) < n {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		defer l.Close()
		port := l.Addr().(*net.TCPAddr).Port
		pc, err := net.ListenPacket("udp", l.Addr().String())
		if err != nil {
			continue
		}
		defer pc.Close()
		ports = append(ports, port)
	}
	return ports
}

// TestMakeRunDemo is the smoke test of `make run`: the demo starts, the
// dig command it prints first answers with an address, its dig AXFR
// gets the zone, and the cnsadm status command it prints lists the
// demo's zones.
func TestMakeRunDemo(t *testing.T) {
	if _, err := exec.LookPath("dig"); err != nil {
		t.Fatal("dig not found: install bind9-dnsutils (scripts/testdeps.sh)")
	}
	bin := t.TempDir()
	build := exec.Command("go", "build", "-o", bin, "../../cmd/cnsd", "../../cmd/cnsadm", "../../cmd/mockcloud")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	ports := freePorts(t, 4)
	o := options{bin: bin, dir: t.TempDir(), generate: "60,6,3",
		dnsPort: ports[0], apiPort: ports[1], cloudPort: ports[2], ldapPort: ports[3]}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	var tried []string
	o.ready = func(try []string) {
		defer cancel()
		tried = try
		dig := shell(t, try[0])
		if net.ParseIP(strings.TrimSpace(dig)) == nil {
			t.Errorf("%s printed %q, want the VM's address", try[0], dig)
		}
		for _, line := range try {
			if strings.HasPrefix(line, "curl -H") {
				if zones := shell(t, line); !strings.Contains(zones, publicZone) {
					t.Errorf("%s printed %s, want the zone %s", line, zones, publicZone)
				}
			}
			if strings.Contains(line, " AXFR ") {
				if axfr := shell(t, line); !strings.Contains(axfr, "\tSOA\t") || strings.Contains(axfr, "Transfer failed") {
					t.Errorf("%s printed:\n%s\nwant the zone", line, axfr)
				}
			}
			if strings.HasSuffix(line, " status") {
				if status := shell(t, line); !strings.Contains(status, publicZone) || !strings.Contains(status, internalZone) {
					t.Errorf("%s printed:\n%s\nwant the zones %s and %s", line, status, publicZone, internalZone)
				}
			}
		}
	}
	var out bytes.Buffer
	if err := demo(ctx, o, &out); err != nil {
		t.Fatalf("demo: %v\n%s", err, logs(o.dir))
	}
	if len(tried) == 0 {
		t.Fatalf("the demo printed nothing to try:\n%s\n%s", out.String(), logs(o.dir))
	}
	t.Logf("demo printed:\n%s", out.String())
}

// shell runs one printed command line as a user would paste it.
func shell(t *testing.T, line string) string {
	t.Helper()
	out, err := exec.Command("sh", "-c", line).CombinedOutput()
	if err != nil {
		t.Errorf("%s: %v\n%s", line, err, out)
	}
	return string(out)
}

func logs(dir string) string {
	var b strings.Builder
	for _, name := range []string{"mockcloud.log", "cnsd.log"} {
		data, _ := os.ReadFile(filepath.Join(dir, name))
		b.WriteString("--- " + name + "\n" + string(data))
	}
	return b.String()
}
