package redis_test

import (
	"context"
	"testing"

	"github.com/cnsd/cnsd/store"
	"github.com/cnsd/cnsd/store/redis"
	"github.com/cnsd/cnsd/store/redistest"
	"github.com/cnsd/cnsd/store/storetest"
	goredis "github.com/redis/go-redis/v9"
)

// TestRedisConformance runs the backend suite, each case on its own
// redis-server so no case sees another's keys.
func TestRedisConformance(t *testing.T) {
	storetest.Run(t, func(t *testing.T) store.Backend {
		return openRedisBackend(t, redistest.Start(t).URL())
	})
}

// TestRedisClusterConformance runs the suite on a three-master Redis
// Cluster: every script and transaction must keep to one slot, and zones
// spread over the nodes. The cluster is started once and flushed before
// each case, as starting one takes seconds.
func TestRedisClusterConformance(t *testing.T) {
	c := redistest.StartCluster(t, 3)
	storetest.Run(t, func(t *testing.T) store.Backend {
		for _, n := range c.Nodes {
			cl := goredis.NewClient(&goredis.Options{Addr: n.Addr()})
			err := cl.FlushAll(context.Background()).Err()
			cl.Close()
			if err != nil {
				t.Fatalf("flush cluster node %s: %v", n.Addr(), err)
			}
		}
		return openRedisBackend(t, c.URL())
	})
}

func openRedisBackend(t *testing.T, url string) *redis.Backend {
	r, err := redis.Open(context.Background(), url, redis.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.Close() })
	return r
}
