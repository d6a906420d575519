package redis

import (
	"context"
	"fmt"
	"strconv"
	"time"

	"github.com/cnsd/cnsd/store"
	goredis "github.com/redis/go-redis/v9"
)

// redisAcquireScript takes the lease if nobody holds it: the epoch comes
// from INCR only when the lease is free, so waiting never burns epochs.
// KEYS: {cnsd}:lease, {cnsd}:epoch (one slot). ARGV: holder id, TTL in ms,
// the highest epoch the caller has seen held. Returns {new epoch}, or
// {0, ms the lease has left, the holder's epoch} when it is held by
// another, so that the caller tries again the moment it expires. When
// the holder is this id already — an earlier run whose reply was lost —
// it returns that epoch and extends the lease, instead of making the
// process wait for its own lease to expire; unless the counter has moved
// past it (a failover or a restart brought back an older value of the
// lease), when every write with it would be fenced: then it takes a new
// epoch. A new epoch is above the
// one the caller saw, also when Redis lost the counter meanwhile (it
// came back without its data): the writer it saw is then fenced by the
// epoch, not only by the lease.
var redisAcquireScript = goredis.NewScript(`
local cur = redis.call('GET', KEYS[1])
if cur then
  local id, epoch = string.match(cur, '^(.*) (%d+)$')
  local counter = tonumber(redis.call('GET', KEYS[2]) or '0') or 0
  if id ~= ARGV[1] then
    return {0, redis.call('PTTL', KEYS[1]), tonumber(epoch) or 0}
  end
  if (tonumber(epoch) or 0) >= counter then
    redis.call('PEXPIRE', KEYS[1], ARGV[2])
    return {tonumber(epoch)}
  end
end
local epoch = redis.call('INCR', KEYS[2])
local seen = tonumber(ARGV[3]) or 0
if epoch <= seen then
  epoch = seen + 1
  redis.call('SET', KEYS[2], epoch)
end
redis.call('SET', KEYS[1], string.format('%s %d', ARGV[1], epoch), 'PX', ARGV[2])
return {epoch}
`)

// redisRenewScript extends the lease if it is still ours, and takes it
// back with the same epoch if it expired while nobody else took it.
// KEYS: {cnsd}:lease, {cnsd}:epoch. ARGV: "<id> <epoch>", TTL in ms,
// epoch. Returns 1 (renewed), 2 (taken back) or 0 (another's).
//
// Taking back is safe: every Acquire raises the epoch counter, so a
// counter not above our epoch means no other process has held the lease
// since, and none can write with an epoch the fence lets through. The
// counter is raised to our epoch in case Redis lost it (a restart without
// AOF), so that the next Acquire hands out a newer one.
var redisRenewScript = goredis.NewScript(`
local cur = redis.call('GET', KEYS[1])
if cur == ARGV[1] then
  redis.call('PEXPIRE', KEYS[1], ARGV[2])
  return 1
end
if cur then
  return 0
end
local counter = tonumber(redis.call('GET', KEYS[2]) or '0') or 0
if counter > tonumber(ARGV[3]) then
  return 0
end
redis.call('SET', KEYS[2], ARGV[3])
redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])
return 2
`)

// redisReleaseScript deletes the lease if it is still ours.
// KEYS: {cnsd}:lease. ARGV: "<id> <epoch>". Returns 1 or 0.
var redisReleaseScript = goredis.NewScript(`
if redis.call('GET', KEYS[1]) == ARGV[1] then
  return redis.call('DEL', KEYS[1])
end
return 0
`)

func (r *Backend) leaseValue(epoch uint64) string {
	return r.opts.ID + " " + strconv.FormatUint(epoch, 10)
}

// Acquire tries to take the lease until it succeeds or ctx ends: when
// another process holds it, again the moment it expires (a dead writer is
// replaced within the TTL), and at least every LeaseTTL/3. Redis errors
// are retried too: the server may be restarting.
func (r *Backend) Acquire(ctx context.Context) (uint64, error) {
	ttl := r.opts.LeaseTTL.Milliseconds()
	t := time.NewTimer(0)
	defer t.Stop()
	var last error
	for {
		wait := r.opts.LeaseTTL / 3
		res, err := redisAcquireScript.Run(ctx, r.c, []string{redisLeaseKey, redisEpochKey}, r.opts.ID, ttl, r.seenEpoch.Load()).Int64Slice()
		if err == nil && len(res) > 2 && res[2] > 0 && uint64(res[2]) > r.seenEpoch.Load() {
			r.seenEpoch.Store(uint64(res[2]))
		}
		switch {
		case err != nil:
			last = err
		case res[0] > 0:
			return uint64(res[0]), nil
		case len(res) > 1 && res[1] >= 0:
			// +1 ms: Redis expires a key once its time has passed.
			wait = min(wait, time.Duration(res[1]+1)*time.Millisecond)
		}
		t.Reset(wait)
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

// Keep renews the lease every LeaseTTL/3 until ctx ends (nil) or the
// lease is another's (store.ErrFenced). While Redis cannot be reached it keeps
// trying: the lease may expire meanwhile, but every Apply is fenced by
// its epoch, so two writers never both write. When Redis answers again
// and the lease has expired without another process taking it, Keep
// takes it back with the same epoch, so a writer rides out a Redis
// outage of any length (see redisRenewScript).
func (r *Backend) Keep(ctx context.Context, epoch uint64) error {
	ttl := r.opts.LeaseTTL
	val := r.leaseValue(epoch)
	t := time.NewTicker(ttl / 3)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-t.C:
		}
		ok, err := redisRenewScript.Run(ctx, r.c, []string{redisLeaseKey, redisEpochKey}, val, ttl.Milliseconds(), epoch).Int()
		switch {
		case ctx.Err() != nil:
			return nil
		case err != nil:
			// Redis is down or unreachable: tried again at the next tick.
		case ok == 0:
			return fmt.Errorf("store: redis lease epoch %d lost: %w", epoch, store.ErrFenced)
		}
	}
}

// Release deletes the lease if this process still holds it with epoch.
func (r *Backend) Release(ctx context.Context, epoch uint64) error {
	if err := redisReleaseScript.Run(ctx, r.c, []string{redisLeaseKey}, r.leaseValue(epoch)).Err(); err != nil {
		return fmt.Errorf("store: release redis lease epoch %d: %w", epoch, err)
	}
	return nil
}
