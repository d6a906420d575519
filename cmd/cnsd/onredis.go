package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/cnsd/cnsd/store"
	"github.com/cnsd/cnsd/store/redis"
)

// Retry of a Redis that cannot be reached: first after retryMin, doubling
// up to retryMax.
const (
	retryMin = 200 * time.Millisecond
	retryMax = 5 * time.Second
)

// durabilityRecheck is how often a process that refuses to write for want
// of an append-only file looks again, so that it starts writing soon
// after the operator turns AOF on.
const durabilityRecheck = 5 * time.Second

// runOnRedis is the work of a process on Redis: it loads the zones (again
// and again while Redis is down), follows the writer, takes the lease
// when it is free and writes, and when the lease is lost to another
// process follows that one; it never gives up on Redis. It returns when
// ctx ends, or on an error that is not Redis's.
func runOnRedis(ctx context.Context, r *redis.Backend, src *source, conf *running, h *health, log *slog.Logger) error {
	for {
		// What this process served until now (as a writer fenced by a
		// failover that may have lost commits, nil at start) stays
		// served where the store is behind it (store.OpenAfter).
		served := src.cur.Load()
		follower, err := retryRedis(ctx, log, "load the zones", func(ctx context.Context) (*store.Store, error) {
			return store.OpenAfter(ctx, r, storeOptions(conf.cfg.Load(), 0, conf.dns.retain), log, served)
		})
		if err != nil {
			return nil // ctx ended
		}
		h.loaded.Store(true)
		src.cur.Store(follower)
		src.signal()
		err = followThenLead(ctx, r, src, follower, conf, h, log)
		h.writer.Store(false)
		switch {
		case ctx.Err() != nil:
			return nil
		case !errors.Is(err, store.ErrFenced):
			return err
		}
		log.Warn("the writer lease was taken by another cnsd; following it", "err", err)
	}
}

// followThenLead follows the writer's commits while another process
// holds the lease, then takes the lease over and leads. It returns
// ErrFenced when the lease is lost again.
func followThenLead(ctx context.Context, r *redis.Backend, src *source, follower *store.Store, conf *running, h *health, log *slog.Logger) error {
	followCtx, stopFollowing := context.WithCancel(ctx)
	defer stopFollowing()
	go func() { _ = follower.Follow(followCtx, r) }()
	following := src.follow(followCtx, follower)
	if err := awaitDurable(ctx, r, log); err != nil {
		return err
	}
	log.Info("waiting for the writer lease")
	epoch, err := r.Acquire(ctx)
	if err != nil {
		return fmt.Errorf("writer lease: %w", err)
	}
	// The follower's zones, not the store's alone: a failover that
	// handed the lease over may have lost commits it served.
	st, err := retryRedis(ctx, log, "load the zones to write them", func(ctx context.Context) (*store.Store, error) {
		opts := storeOptions(conf.cfg.Load(), epoch, conf.dns.retain)
		// A failover may have lost commits secondaries hold; none of
		// their serials is taken again (store/takeover.go).
		opts.TakeoverGap = store.DefaultTakeoverGap
		return store.OpenAfter(ctx, r, opts, log, follower)
	})
	if err != nil {
		release(ctx, r, epoch, log)
		return err
	}
	stopFollowing()
	<-following
	h.writer.Store(true)
	log.Info("writing the store", "epoch", epoch)
	err = lead(ctx, r, src, st, epoch, conf, log)
	h.restored.Add(st.ZonesRestored())
	return err
}

// awaitDurable returns once Redis may be written (see
// redis.Backend.CheckDurability), logging what it found: an error every
// durabilityRecheck while it refuses, a warning when the configuration
// accepts a Redis without AOF. It returns only ctx's error.
func awaitDurable(ctx context.Context, r *redis.Backend, log *slog.Logger) error {
	d, err := retryRedis(ctx, log, "check redis persistence", r.CheckDurability)
	for err == nil && d.Err() != nil {
		log.Error("refusing to write the store", "err", d.Err(), "recheck_in", durabilityRecheck)
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(durabilityRecheck):
		}
		d, err = retryRedis(ctx, log, "check redis persistence", r.CheckDurability)
	}
	switch {
	case err != nil:
		return err
	case d.Unverifiable != nil:
		log.Warn("cannot check that redis persists with an append-only file (CONFIG GET refused); writing anyway as store.redis_accept_no_aof says",
			"err", d.Unverifiable)
	case !d.AppendOnly:
		log.Warn("redis does not persist with an append-only file (appendonly no); writing anyway as store.redis_accept_no_aof says: a redis crash loses the commits since its last RDB snapshot")
	case d.AppendFsync == "no":
		log.Warn("redis has appendfsync no: a machine crash loses the commits the kernel had not written yet (about 30 s); everysec or always is safer",
			"appendfsync", d.AppendFsync)
	default:
		log.Info("redis persists with an append-only file", "appendfsync", d.AppendFsync)
	}
	if d.Replicas > 0 {
		log.Info("redis master has replicas: each commit is published only once one acknowledges it (WAIT)", "replicas", d.Replicas)
	}
	return nil
}

// retryRedis calls f until it succeeds or ctx ends (then it returns
// ctx's error), waiting retryMin, doubling up to retryMax, in between;
// each failure is logged with what was tried.
func retryRedis[T any](ctx context.Context, log *slog.Logger, what string, f func(context.Context) (T, error)) (T, error) {
	wait := retryMin
	for {
		v, err := f(ctx)
		if err == nil || ctx.Err() != nil {
			return v, ctx.Err()
		}
		log.Error("redis unreachable; retrying", "op", what, "err", err, "retry_in", wait)
		select {
		case <-ctx.Done():
			return v, ctx.Err()
		case <-time.After(wait):
		}
		wait = min(2*wait, retryMax)
	}
}
