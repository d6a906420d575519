package xfr

import (
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/miekg/dns"

	"github.com/cnsd/cnsd/logtest"
)

func TestLogLimiter(t *testing.T) {
	var now time.Time
	l := newLogLimiter(time.Minute, 4, func() time.Time { return now })
	steps := []struct {
		advance     time.Duration
		key         string
		ok          bool
		dropped     int
		description string
	}{
		{0, "a", true, 0, "the first line of a key is logged"},
		{time.Second, "a", false, 0, "a repeat within the interval is not"},
		{time.Second, "a", false, 0, "nor another"},
		{0, "b", true, 0, "another key is logged on its own"},
		{time.Minute, "a", true, 2, "after the interval, the line says how many were left out"},
		{time.Second, "a", false, 0, "and the interval starts again"},
		{2 * time.Minute, "a", true, 1, "a count survives a long quiet time"},
		{2 * time.Minute, "a", true, 0, "nothing left out, nothing said"},
	}
	for i, s := range steps {
		now = now.Add(s.advance)
		ok, dropped := l.allow(s.key)
		if ok != s.ok || dropped != s.dropped {
			t.Errorf("step %d (%s): allow(%q) = %v, %d; want %v, %d", i, s.description, s.key, ok, dropped, s.ok, s.dropped)
		}
	}
}

// TestLogLimiterBounded: many keys never make the limiter remember more
// than its maximum, and the keys logged most recently are kept.
func TestLogLimiterBounded(t *testing.T) {
	var now time.Time
	l := newLogLimiter(time.Minute, 100, func() time.Time { return now })
	for i := range 10_000 {
		now = now.Add(time.Millisecond)
		if ok, _ := l.allow(fmt.Sprint("client ", i)); !ok {
			t.Fatalf("the first line of key %d was not logged", i)
		}
		if n := len(l.keys); n > 100 {
			t.Fatalf("%d keys remembered after %d, want at most 100", n, i+1)
		}
	}
	if ok, _ := l.allow("client 9999"); ok {
		t.Errorf("the most recent key was forgotten")
	}
}

// TestRefusedTransfersLoggedOnce: a client asking again and again for a
// transfer it may not have gets one log line a minute per zone, the next
// one counting the repeats; every request is still answered REFUSED.
func TestRefusedTransfersLoggedOnce(t *testing.T) {
	var mu sync.Mutex
	now := time.Date(2026, 11, 23, 12, 0, 0, 0, time.UTC)
	clock := func() time.Time { mu.Lock(); defer mu.Unlock(); return now }
	advance := func(d time.Duration) { mu.Lock(); defer mu.Unlock(); now = now.Add(d) }
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
