package store

import (
	"context"
	"errors"
	"testing"
	"time"
)

func TestRaiseTarget(t *testing.T) {
	const half = 1 << 31
	tests := []struct {
		name        string
		cur, above  Serial
		next        Serial // what the next commit would take
		want        Serial
		wantReached bool
	}{
		{"one above the secondary", 1000, 1100, 1000 + 1, 1101, true},
		{"the clock is further", 1000, 1100, 5000, 5000, true},
		{"across the wrap", 1<<32 - 10, 5, 1<<32 - 10 + 1, 6, true},
		{"the largest single step", 1000, 1000 + half - 2, 1000 + 1, 1000 + half - 1, true},
		{"one short of 2^31: a first step below the secondary's serial", 1000, 1000 + half - 1, 1000 + 1, 1000 + half - 2, false},
		{"then the second, one short", 1000 + half - 2, 1000 + half - 1, 1000 + half - 2 + 1, 1000 + half, true},
		{"2^31 apart: a first step", 1000, 1000 + half, 1000 + 1, 1000 + half - 1, false},
		{"then the second, 2^31 apart", 1000 + half - 1, 1000 + half, 1000 + half - 1 + 1, 1000 + half + 1, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, reached := raiseTarget(tt.cur, tt.above, tt.next)
			if got != tt.want || reached != tt.wantReached {
				t.Errorf("raiseTarget(%d, %d) = %d, %v; want %d, %v", tt.cur, tt.above, got, reached, tt.want, tt.wantReached)
			}
			if d := uint32(got - tt.cur); d == 0 || d > maxSerialStep {
				t.Errorf("step of %d from %d: RFC 1982 cannot order it", d, tt.cur)
			}
		})
	}
}

// TestRaiseSerial: the writer moves a zone's serial one past a
// secondary's with a commit that changes no record, durably; a serial
// already past is left alone; a following store refuses.
func TestRaiseSerial(t *testing.T) {
	const zone = "example.com."
	mem := NewMemory()
	s, clk := open(t, mem, Options{})
	commit(t, s, contrib("vm1", map[string][]Record{zone: {a("a."+zone, "10.0.0.1", "vm1")}}))
	before := s.Snapshot(zone)
	ahead := before.Serial() + 500
	got, reached, err := s.RaiseSerial(t.Context(), zone, ahead)
	if err != nil || !reached || got != ahead+1 {
		t.Fatalf("RaiseSerial(%d) = %d, %v, %v; want %d, true", ahead, got, reached, err, ahead+1)
	}
	snap := s.Snapshot(zone)
	if snap.Serial() != ahead+1 || snap.Len() != before.Len() {
		t.Errorf("after the raise: serial %d, %d records; want %d, %d", snap.Serial(), snap.Len(), ahead+1, before.Len())
	}
	if d, err := snap.DiffSince(before.Serial()); err != nil || len(d.Added)+len(d.Removed) != 0 {
		t.Errorf("diff over the raise = %+v, %v; want an empty one", d, err)
	}
	if again, _ := open(t, mem, Options{}); again.Snapshot(zone).Serial() != ahead+1 {
		t.Errorf("reopened at serial %d, want the raised %d", again.Snapshot(zone).Serial(), ahead+1)
	}
	if got, reached, err := s.RaiseSerial(t.Context(), zone, before.Serial()); err != nil || !reached || got != ahead+1 {
		t.Errorf("raise above a serial already passed = %d, %v, %v; want %d, true and no commit", got, reached, err, ahead+1)
	}
	// The next commit continues from the raised serial.
	clk.Set(t0.Add(time.Second))
	commit(t, s, contrib("vm2", map[string][]Record{zone: {a("b."+zone, "10.0.0.2", "vm2")}}))
	if got := s.Snapshot(zone).Serial(); got != ahead+2 {
		t.Errorf("commit after the raise at serial %d, want %d", got, ahead+2)
	}
	if _, _, err := s.RaiseSerial(t.Context(), "other.", 5); !errors.Is(err, ErrNoZone) {
		t.Errorf("raise of a zone not held: %v, want ErrNoZone", err)
	}

	follower, _ := open(t, mem, Options{})
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	go follower.Follow(ctx, mem)
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(time.Millisecond) {
		follower.mu.Lock()
		following := follower.following
		follower.mu.Unlock()
		if following {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("Follow did not start")
		}
	}
	// A follower does not raise; it tells the writer, whose Verify
	// raises past the serial.
	if _, _, err := follower.RaiseSerial(t.Context(), zone, ahead+100); !errors.Is(err, ErrHinted) {
		t.Fatalf("a following store raised: %v, want ErrHinted", err)
	}
	if h, _ := mem.SerialHints(t.Context()); h[zone] != ahead+100 {
		t.Fatalf("hints after a follower's raise: %v, want %s at %d", h, zone, ahead+100)
	}
	if _, err := s.Verify(t.Context()); err != nil {
		t.Fatalf("writer Verify: %v", err)
	}
	if got := s.Snapshot(zone).Serial(); !(ahead + 100).Less(got) {
		t.Errorf("writer at %d after the follower's hint, want past %d", got, ahead+100)
	}
}
