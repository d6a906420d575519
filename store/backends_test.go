package store

import (
	"context"
	"math/rand"
	"path/filepath"
	"testing"
	"time"
)

// The Store's random-commit property and its follower over the real
// backends, not only Memory: what the Store writes must read back the same
// from each of them.

func TestStoreOverBolt(t *testing.T) {
	for seed := int64(1); seed <= 2; seed++ {
		b, err := OpenBolt(filepath.Join(t.TempDir(), "zones.db"), BoltOptions{})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { b.Close() })
		randomCommitsOver(t, seed, 150, b)
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
