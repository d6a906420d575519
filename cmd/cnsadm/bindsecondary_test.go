package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"net/http/httptest"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/miekg/dns"

	"github.com/cnsd/cnsd/api"
	"github.com/cnsd/cnsd/schema"
	"github.com/cnsd/cnsd/store"
	"github.com/cnsd/cnsd/xfr"
	"github.com/cnsd/cnsd/xfr/secondarytest"
)

// TestBindConfigLargeRRset: a real BIND configured from bind-config's
// output (-primary addr:port) loads a zone whose service has 180
// members, an A RRset of 180 records. The same output without
// max-records-per-type makes a BIND of 9.18.28 or later refuse the zone
// ("too many records"), which is why bind-config sets it.
func TestBindConfigLargeRRset(t *testing.T) {
	const members = 180
	ctx := context.Background()
	st, err := store.Open(ctx, store.NewMemory(), store.Options{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	svc := "web.svc.alice." + bigZone + "."
	for i := range members {
		vm := fmt.Sprintf("00000000-0000-4000-8000-%012d", i)
		addr := fmt.Sprintf("10.1.%d.%d", i/250, i%250+1)
		if _, err := st.CommitSource(ctx, vm, map[string][]store.Record{bigZone + ".": {
			store.NewRecord(fmt.Sprintf("web%d.inst.alice.%s.", i, bigZone), dns.TypeA, addr, vm),
			store.NewRecord(svc, dns.TypeA, addr, vm),
		}}); err != nil {
			t.Fatal(err)
		}
	}
	serial := uint32(st.Snapshot(bigZone + ".").Serial())
	cfg, err := schema.Parse([]byte(`{"my_name": "ns1.example.com", "hostmaster": "hostmaster@example.com",
	  "forward_zones": {"` + bigZone + `": {"networks": ["*"]}}, "allow_transfer": ["127.0.0.0/8"]}`))
	if err != nil {
		t.Fatal(err)
	}
	pc, l := secondarytest.ListenPair(t)
	dnsSrv := xfr.New(cfg, st, xfr.Options{PacketConns: []net.PacketConn{pc}, Listeners: []net.Listener{l}}, nil)
	runCtx, cancel := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- dnsSrv.Run(runCtx) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil && !errors.Is(err, context.Canceled) {
			t.Errorf("xfr: %v", err)
		}
	})
	h := httptest.NewServer(api.New(st, dnsSrv, api.Access{Mode: schema.AuthNone}, nil))
	t.Cleanup(h.Close)

	var out bytes.Buffer
	args := []string{"-api", h.URL, "-config", "/nonexistent", "bind-config", "-primary", pc.LocalAddr().String()}
	if err := run(ctx, args, &out, &out); err != nil {
		t.Fatalf("cnsadm %q: %v", args, err)
	}
	conf := out.String()
	if !strings.Contains(conf, fmt.Sprintf("max-records-per-type %d;", 2*members)) {
		t.Fatalf("bind-config sets no max-records-per-type for %d members:\n%s", members, conf)
	}

	t.Run("with max-records-per-type", func(t *testing.T) {
		sec := secondarytest.StartBINDWith(t, secondarytest.Config{}, conf)
		sec.WaitSerial(t, bigZone, serial, 30*time.Second)
		r := sec.Query(t, svc, "A")
		if len(r.Answer) != members {
			t.Errorf("BIND answers %d A records for %s, want %d", len(r.Answer), svc, members)
		}
	})
	t.Run("without", func(t *testing.T) {
		sec := secondarytest.StartBINDWith(t, secondarytest.Config{}, withoutLimit(conf))
		if !bindEnforcesLimit(t, sec) {
			t.Skipf("this BIND predates max-records-per-type (9.18.28) and has no limit to show")
		}
		t.Logf("BIND: %s", strings.TrimSpace(sec.WaitLog(t, 30*time.Second, bigZone, "too many records")))
		if _, ok := sec.Serial(bigZone); ok {
			t.Errorf("BIND serves %s without max-records-per-type", bigZone)
		}
	})
}

// withoutLimit drops bind-config's max-records-per-type and its comment.
func withoutLimit(conf string) string {
	return regexp.MustCompile(`(?m)^\t// the largest RRset.*\n\t//.*\n\tmax-records-per-type \d+;\n`).ReplaceAllString(conf, "")
}

// bindEnforcesLimit reports whether the running BIND is 9.18.28 or
// later, from the version it logs at start.
func bindEnforcesLimit(t *testing.T, sec *secondarytest.Secondary) bool {
	t.Helper()
	m := regexp.MustCompile(`BIND (\d+)\.(\d+)\.(\d+)`).FindStringSubmatch(sec.Log())
	if m == nil {
		t.Fatalf("no BIND version in the log:\n%s", sec.Log())
	}
	var major, minor, patch int
	fmt.Sscan(m[1]+" "+m[2]+" "+m[3], &major, &minor, &patch)
	// 9.18.28 and 9.20.0 brought the limit (CVE-2024-1737); other
	// branches are taken not to have it, which at worst skips the test.
	switch {
	case major != 9:
		return major > 9
	case minor == 18:
		return patch >= 28
	default:
		return minor >= 20
	}
}
