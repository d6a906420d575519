// Package redis is the Redis store.Backend: production storage, shared by
// several cnsd processes, one of which writes under a lease while the
// others follow. It holds only that I/O (keys, Lua scripts, the lease,
// replicas, durability checks); the contract and its conformance tests
// are the store package's (store.Backend, store/storetest).
//
// redis may import store from this module, and nothing else of it.
package redis

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

	"github.com/cnsd/cnsd/store"
	goredis "github.com/redis/go-redis/v9"
)

// Compile-time checks that Backend is a full backend.
var (
	_ store.Backend      = (*Backend)(nil)
	_ store.Leaser       = (*Backend)(nil)
	_ store.Follower     = (*Backend)(nil)
	_ store.SerialLister = (*Backend)(nil)
	_ store.SerialHinter = (*Backend)(nil)
)

// Defaults of Options.
const (
	DefaultLeaseTTL     = 5 * time.Second
	DefaultPollInterval = time.Second
)

// Options tune Open; the zero value uses the defaults.
type Options struct {
	// LeaseTTL is how long the writer lease lasts without renewal: a
	// dead writer is replaced within LeaseTTL plus LeaseTTL/3 (how often
	// waiting processes try). Keep renews it every LeaseTTL/3. Default
	// DefaultLeaseTTL.
	LeaseTTL time.Duration
	// PollInterval is how often Changed compares zone serials in case a
	// pub/sub message was lost (pub/sub does not survive reconnects).
	// Default DefaultPollInterval.
	PollInterval time.Duration
	// ID names this process in the lease; default host name, pid and a
	// random suffix, so two processes never share one.
	ID string
	// AcceptNoAOF lets Apply write when Redis does not persist with an
	// append-only file, or refuses CONFIG GET; otherwise Apply fails with
	// store.ErrNotDurable (see CheckDurability).
	AcceptNoAOF bool
	// DurabilityInterval is how often Apply checks the persistence
	// again. Default DefaultDurabilityInterval.
	DurabilityInterval time.Duration
	// ReplicaTimeout is how long Apply waits for a replica to acknowledge
	// a commit when the master has replicas (see store.ErrNotReplicated).
	// Default DefaultReplicaTimeout.
	ReplicaTimeout time.Duration
}

// Backend is the Redis store.Backend. It keeps every zone's keys under
// one hash tag (one Cluster slot), so each zone is written atomically by
// one Lua script; see keys.go for the layout.
type Backend struct {
	c    goredis.UniversalClient
	opts Options
	url  string // redacted, for errors
	dur  durability
	held atomic.Int64 // Apply calls no replica acknowledged (CommitsHeld)
	// seenEpoch is the highest epoch Acquire found another process
	// holding the lease with (redisAcquireScript).
	seenEpoch atomic.Uint64
}

// Open connects to the Redis named by url and checks it answers.
// redis://host:port/db and rediss:// give one server; a master_name
// parameter gives Sentinel (the URL's host and addr parameters are the
// sentinels); addr parameters or cluster=true give Redis Cluster.
func Open(ctx context.Context, url string, opts Options) (*Backend, error) {
	r, err := New(url, opts)
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

// New returns the backend for the Redis named by url (see
// Open) without contacting it: only a malformed url is an error.
// Every method reports an unreachable Redis as an error of its own, so a
// process can start, and serve, while Redis is down.
func New(url string, opts Options) (*Backend, error) {
	c, err := newRedisClient(url)
	if err != nil {
		return nil, err
	}
	if opts.LeaseTTL <= 0 {
		opts.LeaseTTL = DefaultLeaseTTL
	}
	if opts.PollInterval <= 0 {
		opts.PollInterval = DefaultPollInterval
	}
	if opts.DurabilityInterval <= 0 {
		opts.DurabilityInterval = DefaultDurabilityInterval
	}
	if opts.ReplicaTimeout <= 0 {
		opts.ReplicaTimeout = DefaultReplicaTimeout
	}
	if opts.ID == "" {
		opts.ID = defaultID()
	}
	return &Backend{c: c, opts: opts, url: redactURL(url)}, nil
}

// Ping checks that Redis answers.
func (r *Backend) Ping(ctx context.Context) error {
	if err := r.c.Ping(ctx).Err(); err != nil {
		return fmt.Errorf("store: redis %s: %w", r.url, err)
	}
	return nil
}

// redisScripts are loaded into the server's script cache by Open.
var redisScripts = []*goredis.Script{redisApplyScript, redisFenceScript,
	redisAcquireScript, redisRenewScript, redisReleaseScript, redisHintScript, redisClearHintScript}

// Close closes the connections.
func (r *Backend) Close() error {
	if err := r.c.Close(); err != nil && !errors.Is(err, goredis.ErrClosed) {
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

// LogTo sends go-redis's own messages (such as a failed dial, once
// per attempt while Redis is down) to log at debug level instead of
// stderr: cnsd logs each outage itself, once per retry of what failed.
// go-redis's logger is global, so this affects every client.
func LogTo(log *slog.Logger) { goredis.SetLogger(redisLogger{log.With("component", "go-redis")}) }

type redisLogger struct{ log *slog.Logger }

func (l redisLogger) Printf(ctx context.Context, format string, v ...any) {
	l.log.DebugContext(ctx, fmt.Sprintf(format, v...))
}
