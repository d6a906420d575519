package store

import (
	"context"
	"math/rand"
	"path/filepath"
	"testing"
	"time"

	"github.com/cnsd/cnsd/store/redistest"
)

// OpenBoltForTest opens the bbolt backend on the file at path, without
// fsync when noSync, and closes it with tb.Cleanup. The backends import
// store, so store's own tests cannot: backends_ext_test.go (package
// store_test) sets this before any test runs.
var OpenBoltForTest func(tb testing.TB, path string, noSync bool) Backend

// OpenRedisForTest opens the Redis backend on the server at url, with the
// lease's TTL and the process's ID when they are not zero, and closes it
// with tb.Cleanup. It is set as OpenBoltForTest is.
var OpenRedisForTest func(tb testing.TB, url string, leaseTTL time.Duration, id string) Backend

// realBackend is what the real backends are besides a Backend.
type realBackend interface {
	Backend
	Leaser
	Follower
}

// openRedisAt opens the Redis backend on the server at url.
func openRedisAt(tb testing.TB, url string) realBackend {
	return OpenRedisForTest(tb, url, 0, "").(realBackend)
}

// openTestRedis starts a redis-server and opens the Redis backend on it.
func openTestRedis(tb testing.TB) (realBackend, *redistest.Server) {
	tb.Helper()
	srv := redistest.Start(tb)
	return openRedisAt(tb, srv.URL()), srv
}

// The Store's random-commit property and its follower over the real
// backends, not only Memory: what the Store writes must read back the same
// from each of them.

func TestStoreOverBolt(t *testing.T) {
	for seed := int64(1); seed <= 2; seed++ {
		randomCommitsOver(t, seed, 150, OpenBoltForTest(t, filepath.Join(t.TempDir(), "zones.db"), false))
	}
}

func TestStoreOverRedis(t *testing.T) {
	r, _ := openTestRedis(t)
	randomCommitsOver(t, 1, 150, r)
}

func TestFollowOverRedis(t *testing.T) {
	wr, srv := openTestRedis(t)
	fr := openRedisAt(t, srv.URL())
	w, clk := open(t, wr, Options{JournalEntries: 3})
	f, _ := open(t, fr, Options{JournalEntries: 3})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- f.Follow(ctx, fr) }()
	defer func() {
		cancel()
		<-done
	}()
	rng := rand.New(rand.NewSource(11))
	for i := range 40 {
		clk.Set(t0.Add(time.Duration(i) * time.Second))
		commit(t, w, randomContribution(rng), randomContribution(rng))
		waitSame(t, w, f)
	}
}
