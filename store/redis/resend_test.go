package redis

import (
	"context"
	"errors"
	"testing"

	"github.com/cnsd/cnsd/store"
)

// TestRedisApplyScriptResent: the apply script sent again with the same
// change id — what go-redis does when a pipeline's reply times out — finds
// its own write and succeeds without writing; a different change from the
// same serial is a conflict. A drop sent again finds the zone gone.
func TestRedisApplyScriptResent(t *testing.T) {
	ctx := context.Background()
	r, _ := openTestRedis(t, Options{})
	z := "resent.example."
	rec := redisA(z, "web", "10.0.0.1", "vm1")
	set := []store.ZoneChange{{Zone: z, Prev: 0, Next: 10, SetVMs: map[string][]store.Record{"vm1": {rec}},
		Diff: store.Diff{Zone: z, From: 0, To: 10, Added: []store.Record{rec}}, KeepJournal: 5}}
	drop := []store.ZoneChange{{Zone: z, Prev: 10, Next: 11, Drop: true}}
	run := func(id string, changes []store.ZoneChange) error {
		cmds, _ := r.runApplyScripts(ctx, changes, encodeApplyArgs(1, id, changes), false)
		return r.applyResult(ctx, 1, changes[0], cmds[0])
	}
	steps := []struct {
		what    string
		id      string
		changes []store.ZoneChange
		want    error
	}{
		{"first run", "id-1", set, nil},
		{"the same change resent", "id-1", set, nil},
		{"another change from the same serial", "id-2", set, store.ErrConflict},
		{"drop", "id-3", drop, nil},
		{"the drop resent", "id-3", drop, nil},
	}
	for _, s := range steps {
		if err := run(s.id, s.changes); !errors.Is(err, s.want) || (s.want == nil) != (err == nil) {
			t.Fatalf("%s: %v, want %v", s.what, err, s.want)
		}
		if s.what == "the same change resent" {
			n, err := r.c.LLen(ctx, zoneKeys(z).journal).Result()
			if err != nil || n != 1 {
				t.Errorf("journal after the resend: %d entries (%v), want the one diff", n, err)
			}
		}
	}
	if n, err := r.c.Exists(ctx, zoneKeys(z).list()...).Result(); err != nil || n != 0 {
		t.Errorf("%d keys of the dropped zone left (%v)", n, err)
	}
}
