package xfr

import (
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/miekg/dns"

	"github.com/cnsd/cnsd/logtest"
)

// TestRefusedTransfersLoggedOnce: a client asking again and again for a
// transfer it may not have gets one log line a minute per zone, the next
// one counting the repeats; every request is still answered REFUSED.
func TestRefusedTransfersLoggedOnce(t *testing.T) {
	hand := newHandClock()
	clock, advance := hand.Now, hand.advance
	logs := &logtest.Buffer{}
	log := slog.New(slog.NewTextHandler(logs, nil))
	zones := map[string][]string{"example.test.": {"a A 192.0.2.1"}, "empty.test.": {"b A 192.0.2.2"}}
	cfg := testConfig(t, "")
	addr, _ := serveLogged(t, cfg, testStore(t, zones), Options{Clock: clock}, log)

	refused := func(zone string) {
		t.Helper()
		if _, rcode, _ := transfer(t, addr, zone, false, 0, nil); rcode != dns.RcodeRefused {
			t.Fatalf("AXFR %s: rcode %s, want REFUSED", zone, dns.RcodeToString[rcode])
		}
	}
	for range 5 {
		refused("example.test.")
	}
	if got := logs.Lines("AXFR refused"); len(got) != 1 {
		t.Fatalf("%d lines for 5 refusals within a minute, want 1:\n%s", len(got), strings.Join(got, ""))
	}
	refused("empty.test.")
	if got := logs.Lines("zone=empty.test."); len(got) != 1 {
		t.Fatalf("the refusal of another zone was not logged on its own: %q", got)
	}
	advance(time.Minute)
	refused("example.test.")
	got := logs.Lines("zone=example.test.")
	if len(got) != 2 || !strings.Contains(got[1], "repeats_not_logged=4") {
		t.Fatalf("after a minute: %q, want a second line with repeats_not_logged=4", got)
	}
}
