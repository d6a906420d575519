package loglimit

import (
	"fmt"
	"log/slog"
	"testing"
	"time"

	"github.com/cnsd/cnsd/logtest"
)

func TestLogLimiter(t *testing.T) {
	var now time.Time
	l := New(time.Minute, 4, func() time.Time { return now })
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
		ok, dropped := l.Allow(s.key)
		if ok != s.ok || dropped != s.dropped {
			t.Errorf("step %d (%s): Allow(%q) = %v, %d; want %v, %d", i, s.description, s.key, ok, dropped, s.ok, s.dropped)
		}
	}
}

// TestLogLimiterBounded: many keys never make the limiter remember more
// than its maximum, and the keys logged most recently are kept.
func TestLogLimiterBounded(t *testing.T) {
	var now time.Time
	l := New(time.Minute, 100, func() time.Time { return now })
	for i := range 10_000 {
		now = now.Add(time.Millisecond)
		if ok, _ := l.Allow(fmt.Sprint("client ", i)); !ok {
			t.Fatalf("the first line of key %d was not logged", i)
		}
		if n := l.Len(); n > 100 {
			t.Fatalf("%d keys remembered after %d, want at most 100", n, i+1)
		}
	}
	if ok, _ := l.Allow("client 9999"); ok {
		t.Errorf("the most recent key was forgotten")
	}
}

// TestWarn: Warn logs the first line of a key, leaves out repeats within
// the interval and counts them on the next line; it counts nothing for a
// level the logger does not log.
func TestWarn(t *testing.T) {
	var now time.Time
	l := New(time.Minute, 10, func() time.Time { return now })
	var buf logtest.Buffer
	log := slog.New(slog.NewTextHandler(&buf, nil))
	for range 5 {
		l.Warn(log, "nic/vm1", "nic cannot be repaired", "vm", "vm1")
		now = now.Add(10 * time.Second)
	}
	now = now.Add(time.Minute)
	l.Warn(log, "nic/vm1", "nic cannot be repaired", "vm", "vm1")
	if got := len(buf.Lines("nic cannot be repaired", "vm=vm1")); got != 2 {
		t.Errorf("%d lines, want 2:\n%s", got, buf.String())
	}
	if got := buf.Lines("repeats_not_logged=4"); len(got) != 1 {
		t.Errorf("no line counts the 4 left out:\n%s", buf.String())
	}
	l.Log(log, slog.LevelDebug, "quiet", "not logged at info")
	if l.Len() != 1 {
		t.Errorf("a line below the logger's level was counted: %d keys", l.Len())
	}
}
