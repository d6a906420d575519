// A commit counts once a replica has it, so that a Sentinel failover
// cannot lose a serial secondaries were told about.

package redis

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/cnsd/cnsd/store"
	goredis "github.com/redis/go-redis/v9"
)

// DefaultReplicaTimeout is how long Apply waits for a replica to
// acknowledge a commit (WAIT 1) when the master has replicas. A replica
// on the same network acknowledges within a millisecond; one that takes a
// second is stalled or cut off.
const DefaultReplicaTimeout = time.Second

// waitsForReplica reports whether Apply must wait for a replica: the last
// check found the master with replicas connected. A single Redis is never
// waited for, nor a cluster, whose zones are spread over masters that one
// connection's WAIT cannot cover.
func (r *Backend) waitsForReplica() bool {
	if _, cluster := r.c.(*goredis.ClusterClient); cluster {
		return false
	}
	return r.Durability().Replicas > 0
}

// countReplicas returns connected_slaves of the server's INFO
// replication. A server that refuses INFO counts as without replicas:
// waiting for replicas that may not exist would stop every commit.
func countReplicas(ctx context.Context, c goredis.Cmdable) (int, error) {
	info, err := c.Info(ctx, "replication").Result()
	var refused goredis.Error
	switch {
	case errors.As(err, &refused):
		return 0, nil
	case err != nil:
		return 0, fmt.Errorf("store: redis INFO replication: %w", err)
	}
	for _, line := range strings.Split(info, "\r\n") {
		if v, ok := strings.CutPrefix(line, "connected_slaves:"); ok {
			return strconv.Atoi(v)
		}
	}
	return 0, nil
}

// refreshReplicas counts the master's replicas again after a WAIT no
// replica answered: a master left without replicas (its only replica
// died, or it was just promoted) is not waited for from the next commit
// on, while one whose replica is connected but stalled still is.
func (r *Backend) refreshReplicas(ctx context.Context) int {
	n, err := countReplicas(ctx, r.c)
	r.dur.mu.Lock()
	defer r.dur.mu.Unlock()
	if err != nil {
		return r.dur.last.Replicas
	}
	r.dur.last.Replicas = n
	return n
}

// forgetDurability makes the next Apply check persistence and replicas
// again: after a failed Apply, Sentinel may have put another master
// behind the same address.
func (r *Backend) forgetDurability() {
	r.dur.mu.Lock()
	r.dur.last.Checked = time.Time{}
	r.dur.mu.Unlock()
}

// notReplicated is Apply's error when the WAIT after the scripts found
// fewer than one replica acknowledging them.
func (r *Backend) notReplicated(ctx context.Context) error {
	r.held.Add(1)
	n := r.refreshReplicas(ctx)
	return fmt.Errorf("store: redis master has %d replicas connected and none acknowledged the commit within %v: %w",
		n, r.opts.ReplicaTimeout, store.ErrNotReplicated)
}

// CommitsHeld returns how many Apply calls wrote and then found no
// replica acknowledging the write (store.ErrNotReplicated).
func (r *Backend) CommitsHeld() int64 { return r.held.Load() }
