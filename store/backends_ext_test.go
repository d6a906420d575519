package store_test

import (
	"context"
	"log/slog"
	"testing"
	"time"

	"github.com/cnsd/cnsd/store"
	"github.com/cnsd/cnsd/store/bolt"
	"github.com/cnsd/cnsd/store/redis"
)

// init gives store's own tests the real backends (backends_test.go), and
// silences go-redis, which logs every failed dial and retry the tests
// cause on purpose.
func init() {
	store.OpenBoltForTest = func(tb testing.TB, path string, noSync bool) store.Backend {
		tb.Helper()
		b, err := bolt.Open(path, bolt.Options{NoSync: noSync})
		if err != nil {
			tb.Fatal(err)
		}
		tb.Cleanup(func() { b.Close() })
		return b
	}
	store.OpenRedisForTest = func(tb testing.TB, url string, leaseTTL time.Duration, id string) store.Backend {
		tb.Helper()
		r, err := redis.Open(context.Background(), url, redis.Options{LeaseTTL: leaseTTL, ID: id})
		if err != nil {
			tb.Fatal(err)
		}
		tb.Cleanup(func() { r.Close() })
		return r
	}
	redis.LogTo(slog.New(slog.DiscardHandler))
}
