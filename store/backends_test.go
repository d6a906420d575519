package store

import (
	"context"
	"math/rand"
	"path/filepath"
	"testing"
	"time"
)

// OpenBoltForTest opens the bbolt backend on the file at path, without
// fsync when noSync, and closes it with tb.Cleanup. The backends import
// store, so store's own tests cannot: backends_ext_test.go (package
// store_test) sets this before any test runs.
var OpenBoltForTest func(tb testing.TB, path string, noSync bool) Backend

// The Store's random-commit property and its follower over the real
// backends, not only Memory: what the Store writes must read back the same
// from each of them.

func TestStoreOverBolt(t *testing.T) {
	for seed := int64(1); seed <= 2; seed++ {
		randomCommitsOver(t, seed, 150, OpenBoltForTest(t, filepath.Join(t.TempDir(), "zones.db"), false))
	}
}

func TestStoreOverRedis(t *testing.T) {
	r, _ := openTestRedis(t, RedisOptions{})
	randomCommitsOver(t, 1, 150, r)
}

func TestFollowOverRedis(t *testing.T) {
	wr, srv := openTestRedis(t, RedisOptions{})
	fr := openRedisAt(t, srv.URL(), RedisOptions{})
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
