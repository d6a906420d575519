package store

import (
	"context"
	"fmt"
	"strconv"
	"time"

	"github.com/redis/go-redis/v9"
)

// redisAcquireScript takes the lease if nobody holds it: the epoch comes
// from INCR only when the lease is free, so waiting never burns epochs.
// KEYS: {cnsd}:lease, {cnsd}:epoch (one slot). ARGV: holder id, TTL in ms.
// Returns the new epoch, or 0 when the lease is held by another. When the
// holder is this id already — an earlier run whose reply was lost — it
// returns that epoch and extends the lease, instead of making the process
// wait for its own lease to expire.
var redisAcquireScript = redis.NewScript(`
local cur = redis.call('GET', KEYS[1])
if cur then
  local id, epoch = string.match(cur, '^(.*) (%d+)$')
  if id == ARGV[1] then
    redis.call('PEXPIRE', KEYS[1], ARGV[2])
    return tonumber(epoch)
  end
  return 0
end
local epoch = redis.call('INCR', KEYS[2])
redis.call('SET', KEYS[1], string.format('%s %d', ARGV[1], epoch), 'PX', ARGV[2])
return epoch
`)

// redisRenewScript extends the lease if it is still ours.
// KEYS: {cnsd}:lease. ARGV: "<id> <epoch>", TTL in ms. Returns 1 or 0.
var redisRenewScript = redis.NewScript(`
if redis.call('GET', KEYS[1]) == ARGV[1] then
  redis.call('PEXPIRE', KEYS[1], ARGV[2])
  return 1
end
return 0
`)

// redisReleaseScript deletes the lease if it is still ours.
// KEYS: {cnsd}:lease. ARGV: "<id> <epoch>". Returns 1 or 0.
var redisReleaseScript = redis.NewScript(`
if redis.call('GET', KEYS[1]) == ARGV[1] then
  return redis.call('DEL', KEYS[1])
end
return 0
`)

func (r *Redis) leaseValue(epoch uint64) string {
	return r.opts.ID + " " + strconv.FormatUint(epoch, 10)
}

// Acquire tries to take the lease every LeaseTTL/3 until it succeeds or
// ctx ends. Redis errors are retried too: the server may be restarting.
func (r *Redis) Acquire(ctx context.Context) (uint64, error) {
	ttl := r.opts.LeaseTTL.Milliseconds()
	t := time.NewTicker(r.opts.LeaseTTL / 3)
	defer t.Stop()
	var last error
	for {
		epoch, err := redisAcquireScript.Run(ctx, r.c, []string{redisLeaseKey, redisEpochKey}, r.opts.ID, ttl).Uint64()
		if err == nil && epoch > 0 {
			return epoch, nil
		}
		if err != nil {
			last = err
		}
		select {
		case <-ctx.Done():
			if last != nil {
				return 0, fmt.Errorf("store: acquire redis lease: %w (last redis error: %v)", ctx.Err(), last)
			}
			return 0, fmt.Errorf("store: acquire redis lease: %w", ctx.Err())
		case <-t.C:
		}
	}
}

// Keep renews the lease every LeaseTTL/3. The lease counts as lost when
// it is gone or another's, or when no renewal has succeeded for a whole
// TTL (it may have expired meanwhile).
func (r *Redis) Keep(ctx context.Context, epoch uint64) error {
	ttl := r.opts.LeaseTTL
	val := r.leaseValue(epoch)
	t := time.NewTicker(ttl / 3)
	defer t.Stop()
	lastOK := time.Now()
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-t.C:
		}
		ok, err := redisRenewScript.Run(ctx, r.c, []string{redisLeaseKey}, val, ttl.Milliseconds()).Int()
		switch {
		case ctx.Err() != nil:
			return nil
		case err != nil && time.Since(lastOK) >= ttl:
			return fmt.Errorf("store: redis lease epoch %d not renewed for %v (%v): %w", epoch, ttl, err, ErrFenced)
		case err != nil:
			// retried at the next tick while the lease may still hold
		case ok == 1:
			lastOK = time.Now()
		default:
			return fmt.Errorf("store: redis lease epoch %d lost: %w", epoch, ErrFenced)
		}
	}
}

// Release deletes the lease if this process still holds it with epoch.
func (r *Redis) Release(ctx context.Context, epoch uint64) error {
	if err := redisReleaseScript.Run(ctx, r.c, []string{redisLeaseKey}, r.leaseValue(epoch)).Err(); err != nil {
		return fmt.Errorf("store: release redis lease epoch %d: %w", epoch, err)
	}
	return nil
}
