// Whether Redis keeps what cnsd writes across its own crash.

package redis

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/cnsd/cnsd/store"
	goredis "github.com/redis/go-redis/v9"
)

// DefaultDurabilityInterval is how often Apply checks again that
// Redis persists with an append-only file.
const DefaultDurabilityInterval = 30 * time.Second

// Durability is what CONFIG GET says about a Redis's persistence.
type Durability struct {
	// Checked is when the check ran; zero: never.
	Checked time.Time
	// AppendOnly: appendonly is yes (on every node of a cluster).
	AppendOnly bool
	// AppendFsync is appendfsync: always, everysec or no ("" when
	// unknown; a cluster's nodes joined with commas when they differ).
	AppendFsync string
	// Unverifiable is why CONFIG GET failed when Redis answered with an
	// error (the command renamed, disabled or denied by an ACL).
	Unverifiable error
	// Accepted: the writer may write without AOF (AcceptNoAOF).
	Accepted bool
	// Replicas is connected_slaves of the master (0 for a cluster, and
	// when Redis refuses INFO): with any, Apply waits for one to
	// acknowledge each commit.
	Replicas int
}

// Writable reports whether the writer may write: AOF is on, or the risk
// is accepted.
func (d Durability) Writable() bool { return d.AppendOnly || d.Accepted }

// Err says why the writer refuses to write (wrapping store.ErrNotDurable), or
// returns nil when it may.
func (d Durability) Err() error {
	switch {
	case d.Writable():
		return nil
	case d.Unverifiable != nil:
		return fmt.Errorf("%w: cannot check its persistence, CONFIG GET appendonly failed (%v); allow CONFIG GET for cnsd, or set store.redis_accept_no_aof if Redis persists otherwise",
			store.ErrNotDurable, d.Unverifiable)
	default:
		return fmt.Errorf("%w: appendonly is no, so a Redis crash loses the commits since its last RDB snapshot; run CONFIG SET appendonly yes (and set it in redis.conf), or set store.redis_accept_no_aof to accept the loss",
			store.ErrNotDurable)
	}
}

// durability is a Redis's last Durability, guarded by mu.
type durability struct {
	mu   sync.Mutex
	last Durability
}

// Durability returns the result of the last check (zero Checked when
// none ran).
func (r *Backend) Durability() Durability {
	r.dur.mu.Lock()
	defer r.dur.mu.Unlock()
	return r.dur.last
}

// CheckDurability asks Redis (every master of a cluster) for appendonly
// and appendfsync, and a single master for its replicas, keeps the result for Durability and Apply, and
// returns it. An error means Redis could not be asked (it is down); a
// CONFIG GET that Redis refuses is no error but Durability.Unverifiable.
func (r *Backend) CheckDurability(ctx context.Context) (Durability, error) {
	d := Durability{AppendOnly: true, Accepted: r.opts.AcceptNoAOF}
	var fsyncs []string
	check := func(ctx context.Context, c goredis.Cmdable) error {
		vals, err := c.ConfigGet(ctx, "append*").Result()
		var refused goredis.Error
		switch {
		case errors.As(err, &refused):
			d.Unverifiable, d.AppendOnly = err, false
			return nil
		case err != nil:
			return err
		}
		d.AppendOnly = d.AppendOnly && vals["appendonly"] == "yes"
		if f := vals["appendfsync"]; !slices.Contains(fsyncs, f) {
			fsyncs = append(fsyncs, f)
		}
		return nil
	}
	var err error
	if cc, ok := r.c.(*goredis.ClusterClient); ok {
		var mu sync.Mutex // ForEachMaster calls check concurrently
		err = cc.ForEachMaster(ctx, func(ctx context.Context, c *goredis.Client) error {
			mu.Lock()
			defer mu.Unlock()
			return check(ctx, c)
		})
	} else if err = check(ctx, r.c); err == nil {
		d.Replicas, err = countReplicas(ctx, r.c)
	}
	if err != nil {
		return Durability{}, fmt.Errorf("store: redis check persistence (CONFIG GET appendonly): %w", err)
	}
	d.AppendFsync = strings.Join(fsyncs, ",")
	d.Checked = time.Now()
	r.dur.mu.Lock()
	r.dur.last = d
	r.dur.mu.Unlock()
	return d, nil
}

// requireDurable returns nil when Redis may be written: its last check
// is recent and said so. It checks again when the last check is older
// than the interval, so that turning AOF off stops the writer within it.
func (r *Backend) requireDurable(ctx context.Context) error {
	d := r.Durability()
	if time.Since(d.Checked) >= r.opts.DurabilityInterval {
		var err error
		if d, err = r.CheckDurability(ctx); err != nil {
			return err
		}
	}
	return d.Err()
}
