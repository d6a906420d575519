package redis

import (
	"context"
	"testing"

	"github.com/cnsd/cnsd/store"
)

// TestRedisSerialHints: a hint only rises (in RFC 1982 order, across the
// wrap), and is cleared only at the serial the writer dealt with.
func TestRedisSerialHints(t *testing.T) {
	const zoneFwd = "dc1.cns.example.com"
	ctx := context.Background()
	r, _ := openTestRedis(t, Options{})
	steps := []struct {
		serial store.Serial
		want   store.Serial
	}{{10, 10}, {5, 10}, {20, 20}, {1<<32 - 1, 20}, {2147483000, 2147483000}, {4000000000, 4000000000}, {3, 3}, {3999999999, 3}}
	for _, st := range steps {
		if err := r.HintSerial(ctx, zoneFwd, st.serial); err != nil {
			t.Fatal(err)
		}
		h, err := r.SerialHints(ctx)
		if err != nil || h[zoneFwd] != st.want {
			t.Fatalf("after hint %d: %v (%v), want %d", st.serial, h, err, st.want)
		}
	}
	if err := r.ClearSerialHint(ctx, zoneFwd, 20); err != nil {
		t.Fatal(err)
	}
	if h, _ := r.SerialHints(ctx); h[zoneFwd] != 3 {
		t.Errorf("a clear at another serial removed the hint: %v", h)
	}
	if err := r.ClearSerialHint(ctx, zoneFwd, 3); err != nil {
		t.Fatal(err)
	}
	if h, _ := r.SerialHints(ctx); len(h) != 0 {
		t.Errorf("hints after the clear: %v", h)
	}
}
