package store

import (
	"path/filepath"
	"testing"
	"time"

	"github.com/cnsd/cnsd/store/redistest"
	"github.com/cnsd/cnsd/zonegen"
)

// floorBackend is one life of a writer: a backend and the lease epoch it
// writes with, and how that life ends.
type floorBackend struct {
	b     Backend
	epoch uint64
	end   func()
}

// TestSerialFloorSurvivesRestartAndTakeover: a reverse zone whose last VM
// left is dropped; after a restart (the store closed and opened again on
// the same bolt file or redis-server) or a takeover (a second process on
// the same Redis taking the lease from one that died holding it), the
// zone made again continues above its final serial, although the new
// writer's clock is an hour behind and nothing of the first writer is in
// memory.
func TestSerialFloorSurvivesRestartAndTakeover(t *testing.T) {
	tests := []struct {
		name string
		// lives returns the first writer's backend, and opens the second
		// one after the first has ended.
		lives func(t *testing.T) (first floorBackend, second func() floorBackend)
	}{
		{"bolt restart", func(t *testing.T) (floorBackend, func() floorBackend) {
			path := filepath.Join(t.TempDir(), "cnsd.db")
			life := func() floorBackend {
				b := OpenBoltForTest(t, path, false)
				epoch, err := b.(Leaser).Acquire(t.Context())
				if err != nil {
					t.Fatal(err)
				}
				return floorBackend{b, epoch, func() { b.Close() }}
			}
			return life(), life
		}},
		{"redis restart", func(t *testing.T) (floorBackend, func() floorBackend) {
			url := redistest.Start(t).URL()
			life := func() floorBackend {
				r := openRedisAt(t, url)
				epoch, err := r.Acquire(t.Context())
				if err != nil {
					t.Fatal(err)
				}
				return floorBackend{r, epoch, func() { r.Release(t.Context(), epoch); r.Close() }}
			}
			return life(), life
		}},
		{"redis takeover", func(t *testing.T) (floorBackend, func() floorBackend) {
			url := redistest.Start(t).URL()
			const ttl = 300 * time.Millisecond
			first := OpenRedisForTest(t, url, ttl, "first").(realBackend)
			epoch, err := first.Acquire(t.Context())
			if err != nil {
				t.Fatal(err)
			}
			// The first writer dies holding the lease: it is neither
			// released nor renewed, and the second waits for it to expire.
			return floorBackend{first, epoch, func() {}}, func() floorBackend {
				second := OpenRedisForTest(t, url, ttl, "second").(realBackend)
				e, err := second.Acquire(t.Context())
				if err != nil || e <= epoch {
					t.Fatalf("takeover: epoch %d (%v), want above %d", e, err, epoch)
				}
				return floorBackend{second, e, func() {}}
			}
		}},
	}
	const zone = "2.0.192.in-addr.arpa."
	vm := func(id string) zonegen.Contribution {
		return contrib(id, map[string][]Record{zone: {ptr("5."+zone, "web.example.com.", id)}})
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			first, next := tt.lives(t)
			s1, clk := open(t, first.b, Options{Epoch: first.epoch})
			// Three commits in one 10-second step put the serial ahead
			// of the clock, as in a busy zone.
			commit(t, s1, vm("vm1"))
			commit(t, s1, vm("vm2"))
			commit(t, s1, zonegen.Contribution{VM: "vm1"})
			final := s1.Snapshot(zone).Serial()
			commit(t, s1, zonegen.Contribution{VM: "vm2"}) // the last VM leaves
			if s1.Snapshot(zone) != nil {
				t.Fatal("the emptied zone was not dropped")
			}
			final++ // published empty at its final serial, then dropped
			first.end()

			second := next()
			defer second.end()
			s2, _ := open(t, second.b, Options{Epoch: second.epoch, Clock: func() time.Time { return clk.Now().Add(-time.Hour) }})
			commit(t, s2, vm("vm3"))
			got := s2.Snapshot(zone).Serial()
			if got != final+1 {
				t.Errorf("zone made again at serial %d, want %d: one above its final serial %d", got, final+1, final)
			}
		})
	}
}
