package redis

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/cnsd/cnsd/store"
	goredis "github.com/redis/go-redis/v9"
)

func TestRedisLease(t *testing.T) {
	ctx := context.Background()
	const ttl = time.Second
	a, srv := openTestRedis(t, Options{LeaseTTL: ttl, ID: "a"})
	b := openRedisAt(t, srv.URL(), Options{LeaseTTL: ttl, ID: "b"})

	ea, err := a.Acquire(ctx)
	redisMust(t, err)
	// Keep holds the lease past its TTL while b waits in vain.
	keepCtx, stopKeep := context.WithCancel(ctx)
	kept := make(chan error, 1)
	go func() { kept <- a.Keep(keepCtx, ea) }()
	short, cancel := context.WithTimeout(ctx, 3*ttl)
	_, err = b.Acquire(short)
	cancel()
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("second Acquire while held = %v, want deadline exceeded", err)
	}
	stopKeep()
	if err := <-kept; err != nil {
		t.Fatalf("Keep until ctx ends = %v, want nil", err)
	}

	redisMust(t, b.Release(ctx, 99)) // not b's: a no-op
	redisMust(t, a.Release(ctx, ea))
	eb, err := b.Acquire(ctx)
	redisMust(t, err)
	if eb <= ea {
		t.Fatalf("epoch after release %d, want > %d", eb, ea)
	}
	if err := a.Keep(ctx, ea); !errors.Is(err, store.ErrFenced) {
		t.Fatalf("Keep of a lost lease = %v, want ErrFenced", err)
	}
	if err := a.Apply(ctx, ea, []store.ZoneChange{{Zone: "z.", Next: 1, KeepJournal: 1}}); !errors.Is(err, store.ErrFenced) {
		t.Fatalf("Apply with the old epoch = %v, want ErrFenced", err)
	}

	// Without Keep the lease expires and the next holder gets a new epoch.
	start := time.Now()
	ea2, err := a.Acquire(ctx)
	redisMust(t, err)
	if ea2 <= eb {
		t.Fatalf("epoch after expiry %d, want > %d", ea2, eb)
	}
	if waited := time.Since(start); waited > 3*ttl {
		t.Errorf("Acquire after expiry took %v, TTL %v", waited, ttl)
	}
}

// TestRedisAcquireResent: the acquire script run again by the holder (a
// resend after a lost reply) returns the holder's epoch at once instead of
// making it wait for its own lease to expire; another id still waits.
func TestRedisAcquireResent(t *testing.T) {
	ctx := context.Background()
	a, srv := openTestRedis(t, Options{LeaseTTL: time.Minute, ID: "host-1 pid"})
	b := openRedisAt(t, srv.URL(), Options{LeaseTTL: time.Minute, ID: "host-1"})
	first, err := a.Acquire(ctx)
	redisMust(t, err)
	short, cancel := context.WithTimeout(ctx, time.Second)
	defer cancel()
	again, err := a.Acquire(short)
	if err != nil || again != first {
		t.Fatalf("Acquire by the holder again = %d, %v; want its epoch %d", again, err, first)
	}
	if _, err := b.Acquire(short); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Acquire by an id that is a prefix of the holder's = %v, want a wait until the deadline", err)
	}
}

// TestRedisLeaseRidesOutOutage: Keep does not give the lease up while
// Redis is down for longer than the TTL; when Redis is back (with its
// AOF), the expired lease is taken back with the same epoch, which still
// writes, and another process still waits.
func TestRedisLeaseRidesOutOutage(t *testing.T) {
	ctx := context.Background()
	const ttl = 300 * time.Millisecond
	a, srv := openTestRedis(t, Options{LeaseTTL: ttl, ID: "a"})
	b := openRedisAt(t, srv.URL(), Options{LeaseTTL: ttl, ID: "b"})
	ea, err := a.Acquire(ctx)
	redisMust(t, err)
	kept := make(chan error, 1)
	keepCtx, stopKeep := context.WithCancel(ctx)
	defer stopKeep()
	go func() { kept <- a.Keep(keepCtx, ea) }()

	srv.Kill()
	time.Sleep(5 * ttl)
	srv.Restart()
	// The first renewal that reaches Redis takes the lease back (go-redis
	// may wait a while before dialling again after failed dials).
	admin := goredis.NewClient(&goredis.Options{Addr: srv.Addr()})
	defer admin.Close()
	deadline := time.Now().Add(10 * time.Second)
	for admin.Get(ctx, redisLeaseKey).Val() != a.leaseValue(ea) {
		if time.Now().After(deadline) {
			t.Fatalf("lease %q 10 s after Redis came back, want %q", admin.Get(ctx, redisLeaseKey).Val(), a.leaseValue(ea))
		}
		time.Sleep(10 * time.Millisecond)
	}
	select {
	case err := <-kept:
		t.Fatalf("Keep returned %v after an outage of 5 TTLs, want it to keep the lease", err)
	default:
	}
	short, cancel := context.WithTimeout(ctx, 3*ttl)
	defer cancel()
	if e, err := b.Acquire(short); err == nil {
		t.Fatalf("another process acquired epoch %d after the outage; the writer's lease should hold", e)
	}
	redisMust(t, a.Apply(ctx, ea, []store.ZoneChange{{Zone: "z.", Next: 1, KeepJournal: 1}}))
}

// TestRedisLeaseNotTakenBackAfterAnother: a lease that expired while
// another process held it in between is lost, even once that process let
// it go, because the epoch counter moved on.
func TestRedisLeaseNotTakenBackAfterAnother(t *testing.T) {
	ctx := context.Background()
	const ttl = 300 * time.Millisecond
	a, srv := openTestRedis(t, Options{LeaseTTL: ttl, ID: "a"})
	b := openRedisAt(t, srv.URL(), Options{LeaseTTL: ttl, ID: "b"})
	ea, err := a.Acquire(ctx)
	redisMust(t, err)
	// The lease expires unrenewed (as when a could not reach Redis)...
	time.Sleep(ttl + ttl/2)
	eb, err := b.Acquire(ctx)
	redisMust(t, err)
	// ...and b holds it, then lets it go.
	redisMust(t, b.Release(ctx, eb))
	if err := a.Keep(ctx, ea); !errors.Is(err, store.ErrFenced) {
		t.Fatalf("Keep after another held the lease = %v, want ErrFenced", err)
	}
}

// TestRedisLeaseLostWithTheData: a Redis that comes back without its data
// (no persistence, or another node promoted without it) has lost the
// epoch counter too, so another process's Acquire may hand out the
// writer's own epoch again. The writer must then not write: its Apply is
// fenced because the lease is another's, whatever the epochs say.
func TestRedisLeaseLostWithTheData(t *testing.T) {
	ctx := context.Background()
	const ttl = 10 * time.Second
	a, srv := openTestRedis(t, Options{LeaseTTL: ttl, ID: "a"})
	b := openRedisAt(t, srv.URL(), Options{LeaseTTL: ttl, ID: "b"})
	ea, err := a.Acquire(ctx)
	redisMust(t, err)
	redisMust(t, a.Apply(ctx, ea, []store.ZoneChange{{Zone: "z.", Next: 1, KeepJournal: 1}}))

	redisMust(t, a.c.FlushAll(ctx).Err()) // as a restart without persistence
	eb, err := b.Acquire(ctx)
	redisMust(t, err)
	if eb != ea {
		t.Logf("epochs %d and %d: the collision this test is about did not happen", ea, eb)
	}
	// A zone nobody has written since: only the fence can refuse it.
	if err := a.Apply(ctx, ea, []store.ZoneChange{{Zone: "y.", Next: 1, KeepJournal: 1}}); !errors.Is(err, store.ErrFenced) {
		t.Fatalf("Apply by a, whose lease b now holds with epoch %d (a's %d) = %v, want ErrFenced", eb, ea, err)
	}
	redisMust(t, b.Apply(ctx, eb, []store.ZoneChange{{Zone: "z.", Next: 1, KeepJournal: 1}}))
}

// TestRedisEpochAboveTheOneSeen: a process that waited for the lease
// while another held it gets, once Redis has lost its data, an epoch
// above that holder's, not the counter's fresh start.
func TestRedisEpochAboveTheOneSeen(t *testing.T) {
	ctx := context.Background()
	const ttl = 10 * time.Second
	a, srv := openTestRedis(t, Options{LeaseTTL: ttl, ID: "a"})
	b := openRedisAt(t, srv.URL(), Options{LeaseTTL: ttl, ID: "b"})
	var ea uint64
	for range 3 { // a few epochs, so that a fresh counter's would be below
		redisMust(t, a.Release(ctx, ea))
		var err error
		ea, err = a.Acquire(ctx)
		redisMust(t, err)
	}
	short, cancel := context.WithTimeout(ctx, 100*time.Millisecond)
	if _, err := b.Acquire(short); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Acquire while a holds the lease = %v, want deadline exceeded", err)
	}
	cancel()

	redisMust(t, a.c.FlushAll(ctx).Err()) // as a restart without persistence
	eb, err := b.Acquire(ctx)
	redisMust(t, err)
	if eb <= ea {
		t.Fatalf("epoch %d after Redis lost its data, want above %d, the epoch b saw a hold", eb, ea)
	}
	if err := a.Apply(ctx, ea, []store.ZoneChange{{Zone: "y.", Next: 1, KeepJournal: 1}}); !errors.Is(err, store.ErrFenced) {
		t.Fatalf("Apply by a with epoch %d after b took %d = %v, want ErrFenced", ea, eb, err)
	}
}

// TestRedisAcquireOwnStaleLease: a lease of this process's with an epoch
// below the counter (a failover or a restart brought back an older value
// of it) is not handed back by Acquire: every Apply with that epoch would
// be fenced, and Acquire would hand it back again and again. Acquire
// takes a new epoch instead.
func TestRedisAcquireOwnStaleLease(t *testing.T) {
	ctx := context.Background()
	a, _ := openTestRedis(t, Options{LeaseTTL: 10 * time.Second, ID: "a"})
	redisMust(t, a.c.Set(ctx, redisEpochKey, 5, 0).Err())
	redisMust(t, a.c.Set(ctx, redisLeaseKey, a.leaseValue(3), 10*time.Second).Err())
	e, err := a.Acquire(ctx)
	redisMust(t, err)
	if e <= 5 {
		t.Fatalf("Acquire over a's own lease of epoch 3, counter at 5 = epoch %d, want above 5", e)
	}
	redisMust(t, a.Apply(ctx, e, []store.ZoneChange{{Zone: "z.", Next: 1, KeepJournal: 1}}))
}
