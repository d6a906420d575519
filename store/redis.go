// The Redis backend: production storage, shared by several cnsd processes.

package store

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"
)

// Compile-time checks that Redis is a full backend.
var (
	_ Backend      = (*Redis)(nil)
	_ Leaser       = (*Redis)(nil)
	_ Follower     = (*Redis)(nil)
	_ SerialLister = (*Redis)(nil)
	_ SerialHinter = (*Redis)(nil)
)

// Defaults of RedisOptions.
const (
	DefaultRedisLeaseTTL     = 5 * time.Second
	DefaultRedisPollInterval = time.Second
)

// RedisOptions tune OpenRedis; the zero value uses the defaults.
type RedisOptions struct {
	// LeaseTTL is how long the writer lease lasts without renewal: a
	// dead writer is replaced within LeaseTTL plus LeaseTTL/3 (how often
	// waiting processes try). Keep renews it every LeaseTTL/3. Default
	// DefaultRedisLeaseTTL.
	LeaseTTL time.Duration
	// PollInterval is how often Changed compares zone serials in case a
	// pub/sub message was lost (pub/sub does not survive reconnects).
	// Default DefaultRedisPollInterval.
	PollInterval time.Duration
	// ID names this process in the lease; default host name, pid and a
	// random suffix, so two processes never share one.
	ID string
	// AcceptNoAOF lets Apply write when Redis does not persist with an
	// append-only file, or refuses CONFIG GET; otherwise Apply fails with
	// ErrNotDurable (see CheckDurability).
	AcceptNoAOF bool
	// DurabilityInterval is how often Apply checks the persistence
	// again. Default DefaultRedisDurabilityInterval.
	DurabilityInterval time.Duration
	// ReplicaTimeout is how long Apply waits for a replica to acknowledge
	// a commit when the master has replicas (see ErrNotReplicated).
	// Default DefaultRedisReplicaTimeout.
	ReplicaTimeout time.Duration
}

// Redis is the Redis backend. It keeps every zone's keys under one hash
// tag (one Cluster slot), so each zone is written atomically by one Lua
// script; see redis_keys.go for the layout.
type Redis struct {
	c    redis.UniversalClient
	opts RedisOptions
	url  string // redacted, for errors
	dur  durability
	held atomic.Int64 // Apply calls no replica acknowledged (CommitsHeld)
}

// OpenRedis connects to the Redis named by url and checks it answers.
// redis://host:port/db and rediss:// give one server; a master_name
// parameter gives Sentinel (the URL's host and addr parameters are the
// sentinels); addr parameters or cluster=true give Redis Cluster.
func OpenRedis(ctx context.Context, url string, opts RedisOptions) (*Redis, error) {
	r, err := NewRedis(url, opts)
	if err != nil {
		return nil, err
	}
	if err := r.Ping(ctx); err != nil {
		r.Close()
		return nil, err
	}
	// Loading the scripts now saves sending a large first commit twice
	// (EVALSHA, NOSCRIPT, EVAL); Apply still falls back to EVAL when a
	// restarted server has lost them, so errors here do not matter.
	for _, s := range redisScripts {
		_ = s.Load(ctx, r.c).Err()
	}
	return r, nil
}

// NewRedis returns the backend for the Redis named by url (see
// OpenRedis) without contacting it: only a malformed url is an error.
// Every method reports an unreachable Redis as an error of its own, so a
// process can start, and serve, while Redis is down.
func NewRedis(url string, opts RedisOptions) (*Redis, error) {
	c, err := newRedisClient(url)
	if err != nil {
		return nil, err
	}
	if opts.LeaseTTL <= 0 {
		opts.LeaseTTL = DefaultRedisLeaseTTL
	}
	if opts.PollInterval <= 0 {
		opts.PollInterval = DefaultRedisPollInterval
	}
	if opts.DurabilityInterval <= 0 {
		opts.DurabilityInterval = DefaultRedisDurabilityInterval
	}
	if opts.ReplicaTimeout <= 0 {
		opts.ReplicaTimeout = DefaultRedisReplicaTimeout
	}
	if opts.ID == "" {
		opts.ID = defaultID()
	}
	return &Redis{c: c, opts: opts, url: redactURL(url)}, nil
}

// Ping checks that Redis answers.
func (r *Redis) Ping(ctx context.Context) error {
	if err := r.c.Ping(ctx).Err(); err != nil {
		return fmt.Errorf("store: redis %s: %w", r.url, err)
	}
	return nil
}

// redisScripts are loaded into the server's script cache by OpenRedis.
var redisScripts = []*redis.Script{redisApplyScript, redisFenceScript,
	redisAcquireScript, redisRenewScript, redisReleaseScript, redisHintScript, redisClearHintScript}

// Close closes the connections.
func (r *Redis) Close() error {
	if err := r.c.Close(); err != nil && !errors.Is(err, redis.ErrClosed) {
		return fmt.Errorf("store: close redis: %w", err)
	}
	return nil
}

func defaultID() string {
	host, _ := os.Hostname()
	var b [4]byte
	_, _ = rand.Read(b[:]) // crypto/rand.Read never fails
	return fmt.Sprintf("%s-%d-%s", host, os.Getpid(), hex.EncodeToString(b[:]))
}

// LogRedisTo sends go-redis's own messages (such as a failed dial, once
// per attempt while Redis is down) to log at debug level instead of
// stderr: cnsd logs each outage itself, once per retry of what failed.
// go-redis's logger is global, so this affects every client.
func LogRedisTo(log *slog.Logger) { redis.SetLogger(redisLogger{log.With("component", "go-redis")}) }

type redisLogger struct{ log *slog.Logger }

func (l redisLogger) Printf(ctx context.Context, format string, v ...any) {
	l.log.DebugContext(ctx, fmt.Sprintf(format, v...))
}
