package feed

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/go-ldap/ldap/v3"
	"golang.org/x/sync/singleflight"

	"github.com/cnsd/cnsd/loglimit"
	"github.com/cnsd/cnsd/schema"
	"github.com/cnsd/cnsd/zonegen"
)

// Errors of UFDS lookups.
var (
	// ErrUnresolved means UFDS could not be asked, or answered with
	// something unusable, and no earlier answer is cached. The caller
	// must keep what it has: an account it cannot read is not an account
	// that is gone.
	ErrUnresolved = errors.New("account unresolved")
	// ErrNoAccount means UFDS answered that no such account exists.
	ErrNoAccount = errors.New("no such account")
)

// UFDS reads accounts from UFDS over LDAP, caches them for the configured
// time and follows UFDS's changelog (Watch) to drop accounts whose flags or
// login change. It is safe for concurrent use.
type UFDS struct {
	url, bindDN, bindPassword string
	ttl                       time.Duration
	log                       *slog.Logger
	// warns keeps warnings every lookup would repeat to one a minute per
	// account.
	warns *loglimit.Limiter

	// Tests shorten these.
	pollEvery            time.Duration // between changelog polls
	retryMin, retryMax   time.Duration // back-off after a failed connect or poll
	dialTimeout, timeout time.Duration
	now                  func() time.Time

	conn connState

	mu    sync.Mutex // guards cache, epoch
	cache map[string]cachedAccount
	// epoch counts invalidations; a lookup stores its answer only if no
	// invalidation happened while it was in flight, so an answer read
	// before a change never outlives the change.
	epoch   uint64
	flights singleflight.Group

	searches atomic.Int64     // LDAP searches for accounts, for tests
	onPoll   func(last int64) // called after each good changelog poll, for tests
}

// cachedAccount is an account and when it stops being fresh. A stale
// account is not served while UFDS answers, but stays as the answer when
// it does not.
type cachedAccount struct {
	acct    zonegen.Account
	expires time.Time
}

// NewUFDS returns a client for cfg. Nothing is dialled until the first
// lookup or Watch. A nil log discards.
func NewUFDS(cfg schema.UFDSConfig, log *slog.Logger) *UFDS {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	ttl := cfg.CacheTime
	if ttl <= 0 {
		ttl = 5 * time.Minute
	}
	u := &UFDS{
		url: ufdsURL(cfg.Endpoint), bindDN: cfg.BindDN, bindPassword: cfg.BindPassword,
		ttl: ttl, log: log.With("component", "ufds"),
		pollEvery: 5 * time.Second, retryMin: time.Second, retryMax: time.Minute,
		dialTimeout: 5 * time.Second, timeout: 30 * time.Second,
		now: time.Now, cache: make(map[string]cachedAccount),
	}
	u.warns = loglimit.New(time.Minute, warnKeys, func() time.Time { return u.now() })
	return u
}

// warnKeys is how many keys (accounts) repeated warnings are counted for.
const warnKeys = 4096

// ufdsURL is the URL of an endpoint; a bare address means LDAPS on the
// standard port, as the shipped CNS connected.
func ufdsURL(e schema.Endpoint) string {
	if e.URL != "" {
		return e.URL
	}
	return "ldaps://" + e.Address + ":636"
}

// User returns the account uuid. Concurrent lookups of one uuid share one
// LDAP search. When UFDS fails, a cached account is returned however old
// it is; with nothing cached the error wraps ErrUnresolved.
func (u *UFDS) User(ctx context.Context, uuid string) (zonegen.Account, error) {
	u.mu.Lock()
	c, ok := u.cache[uuid]
	epoch := u.epoch
	u.mu.Unlock()
	if ok && u.now().Before(c.expires) {
		return c.acct, nil
	}
	key := uuid + "@" + strconv.FormatUint(epoch, 10)
	// The search is shared, so it must not die with the first caller's
	// context; each caller still stops waiting when its own ends.
	ch := u.flights.DoChan(key, func() (any, error) { return u.fetch(uuid, epoch) })
	select {
	case r := <-ch:
		if r.Err != nil {
			return zonegen.Account{}, r.Err
		}
		return r.Val.(zonegen.Account), nil
	case <-ctx.Done():
		return zonegen.Account{}, fmt.Errorf("look up account %s: %w", uuid, ctx.Err())
	}
}

// fetch searches UFDS for uuid and updates the cache with the answer.
func (u *UFDS) fetch(uuid string, epoch uint64) (zonegen.Account, error) {
	acct, err := u.search(uuid)
	u.mu.Lock()
	defer u.mu.Unlock()
	switch {
	case err == nil:
		if u.epoch == epoch {
			u.cache[uuid] = cachedAccount{acct, u.now().Add(u.ttl)}
		}
		return acct, nil
	case errors.Is(err, ErrNoAccount):
		delete(u.cache, uuid)
		return zonegen.Account{}, fmt.Errorf("look up account %s: %w", uuid, err)
	}
	if c, ok := u.cache[uuid]; ok {
		// Debug: during an outage this is every lookup of a stale
		// account; the outage itself is logged when dialling fails.
		u.log.Debug("ufds lookup failed; using the cached account", "owner", uuid, "err", err)
		return c.acct, nil
	}
	return zonegen.Account{}, fmt.Errorf("look up account %s: %w: %w", uuid, ErrUnresolved, err)
}

// invalidate makes uuid's cached account stale, so the next lookup asks
// UFDS, and discards answers to lookups already in flight.
func (u *UFDS) invalidate(uuid string) {
	u.mu.Lock()
	defer u.mu.Unlock()
	u.epoch++
	if c, ok := u.cache[uuid]; ok {
		c.expires = time.Time{}
		u.cache[uuid] = c
	}
}

// search runs one LDAP search for the account uuid.
func (u *UFDS) search(uuid string) (zonegen.Account, error) {
	u.searches.Add(1)
	filter := "(&(objectclass=sdcperson)(uuid=" + ldap.EscapeFilter(uuid) + "))"
	res, truncated, err := u.query(ldap.NewSearchRequest(usersDN, ldap.ScopeSingleLevel,
		ldap.NeverDerefAliases, 2, int(u.timeout/time.Second), false, filter, nil, nil))
	switch {
	case err != nil:
		return zonegen.Account{}, err
	case len(res.Entries) == 0:
		return zonegen.Account{}, ErrNoAccount
	case truncated || len(res.Entries) > 1:
		return zonegen.Account{}, fmt.Errorf("several entries have uuid %s", uuid)
	}
	acct, err := parseAccount(res.Entries[0])
	if err != nil {
		// Every retry of the owner's VMs reads the entry again.
		u.warns.Warn(u.log, "malformed/"+uuid, "malformed ufds entry skipped", "dn", res.Entries[0].DN, "owner", uuid, "err", err)
		return zonegen.Account{}, err
	}
	return acct, nil
}

// usersDN is where UFDS keeps accounts.
const usersDN = "ou=users, o=smartdc"

// invalidateAll makes every cached account stale and returns their uuids.
func (u *UFDS) invalidateAll() []string {
	u.mu.Lock()
	defer u.mu.Unlock()
	u.epoch++
	uuids := make([]string, 0, len(u.cache))
	for id, c := range u.cache {
		c.expires = time.Time{}
		u.cache[id] = c
		uuids = append(uuids, id)
	}
	slices.Sort(uuids)
	return uuids
}

// SetPollInterval sets how often Watch reads the changelog when it is
// idle (default 5 s). Call it before Watch.
func (u *UFDS) SetPollInterval(d time.Duration) {
	if d > 0 {
		u.pollEvery = d
	}
}

// Cached returns the account uuid as last read from UFDS, however old,
// without asking UFDS: what a caller uses once it has seen UFDS fail, so
// that many lookups during an outage do not each wait for a timeout.
func (u *UFDS) Cached(uuid string) (zonegen.Account, bool) {
	u.mu.Lock()
	defer u.mu.Unlock()
	c, ok := u.cache[uuid]
	return c.acct, ok
}
