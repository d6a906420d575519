package feed

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"golang.org/x/sync/singleflight"
)

// cacheEntry is one cached NAPI answer; missing records a 404.
type cacheEntry[V any] struct {
	val     V
	missing bool
	expires time.Time
}

// ttlCache caches one kind of NAPI object by key. Expired entries are kept:
// they answer when NAPI fails, because a stale network is better than
// treating the VM as unresolved.
type ttlCache[V any] struct {
	kind         string // what errors say it is: "network", "nic", …
	logKey       string // the slog key of the key: "network", "mac", …
	ttl, missTTL time.Duration
	fetchTimeout time.Duration
	now          func() time.Time
	log          *slog.Logger
	sf           singleflight.Group

	mu sync.Mutex // guards m
	m  map[string]cacheEntry[V]
}

// lookup answers key from the cache while it is fresh, and otherwise asks
// fetch, once for all concurrent callers of the same key.
func (c *ttlCache[V]) lookup(ctx context.Context, key string, fetch func(context.Context) (V, error)) (V, error) {
	var zero V
	if e, ok := c.entry(key, true); ok {
		return c.result(e, key)
	}
	// The shared fetch must not die with the first caller's ctx, which
	// would fail every other caller waiting on it.
	ch := c.sf.DoChan(key, func() (any, error) {
		fctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), c.fetchTimeout)
		defer cancel()
		return c.refresh(fctx, key, fetch)
	})
	select {
	case <-ctx.Done():
		return zero, c.wrap(key, ctx.Err())
	case r := <-ch:
		if r.Err != nil {
			return zero, r.Err
		}
		return r.Val.(V), nil
	}
}

// refresh fetches key and caches the answer: a value for the TTL, a 404 for
// the shorter miss TTL. Any other failure falls back to what is cached,
// however old, and is logged since the caller never sees it; with nothing
// cached it is returned for the caller to report.
func (c *ttlCache[V]) refresh(ctx context.Context, key string, fetch func(context.Context) (V, error)) (V, error) {
	var zero V
	v, err := fetch(ctx)
	switch {
	case err == nil:
		c.store(key, cacheEntry[V]{val: v, expires: c.now().Add(c.ttl)})
		return v, nil
	case errors.Is(err, ErrNotFound):
		c.store(key, cacheEntry[V]{missing: true, expires: c.now().Add(c.missTTL)})
		return zero, c.wrap(key, err)
	}
	if e, ok := c.entry(key, false); ok {
		c.log.Warn("NAPI lookup failed; using the cached answer", c.logKey, key,
			"expired", e.expires.UTC().Format(time.RFC3339), "err", err)
		// Until the retry time, the stale answer is served as if fresh, so
		// that an outage of NAPI is not met with one request per lookup.
		c.store(key, cacheEntry[V]{val: e.val, missing: e.missing, expires: c.now().Add(c.missTTL)})
		return c.result(e, key)
	}
	return zero, c.wrap(key, err)
}

// entry returns the cached entry of key; with fresh, only an unexpired one.
func (c *ttlCache[V]) entry(key string, fresh bool) (cacheEntry[V], bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.m[key]
	if ok && fresh && !c.now().Before(e.expires) {
		return cacheEntry[V]{}, false
	}
	return e, ok
}

func (c *ttlCache[V]) store(key string, e cacheEntry[V]) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.m == nil {
		c.m = map[string]cacheEntry[V]{}
	}
	c.m[key] = e
}

// result turns an entry into lookup's answer.
func (c *ttlCache[V]) result(e cacheEntry[V], key string) (V, error) {
	if e.missing {
		var zero V
		return zero, c.wrap(key, ErrNotFound)
	}
	return e.val, nil
}

// wrap names the object an error is about; the pool listing has no key.
func (c *ttlCache[V]) wrap(key string, err error) error {
	if key == "" {
		return fmt.Errorf("%s: %w", c.kind, err)
	}
	return fmt.Errorf("%s %s: %w", c.kind, key, err)
}
