package redis

import (
	"fmt"
	"net/url"
	"strconv"
	"time"

	goredis "github.com/redis/go-redis/v9"
)

// DefaultIOTimeout is the read and write timeout of Redis commands
// when the URL sets none (read_timeout, write_timeout). go-redis's 3 s is
// shorter than the script that writes a first listing of 100k VMs takes
// on a busy server; a reply that times out is not a failed write, and
// waiting for it is cheaper than loading the zones again.
const DefaultIOTimeout = 30 * time.Second

// ioTimeouts returns the read and write timeouts: the URL's own, or
// DefaultIOTimeout.
func ioTimeouts(q url.Values, read, write time.Duration) (time.Duration, time.Duration) {
	if !q.Has("read_timeout") {
		read = DefaultIOTimeout
	}
	if !q.Has("write_timeout") {
		write = DefaultIOTimeout
	}
	return read, write
}

// newRedisClient picks the client kind from the URL. It parses with the
// go-redis parser of that kind and builds the client NewUniversalClient
// would build, but from the full parsed options: converting to
// UniversalOptions would drop settings such as TLS server names.
func newRedisClient(raw string) (goredis.UniversalClient, error) {
	u, err := url.Parse(raw)
	if err != nil {
		return nil, fmt.Errorf("store: redis url: %w", err)
	}
	q := u.Query()
	switch {
	case q.Has("master_name"):
		o, err := goredis.ParseFailoverURL(raw)
		if err != nil {
			return nil, fmt.Errorf("store: redis sentinel url %s: %w", redactURL(raw), err)
		}
		o.ReadTimeout, o.WriteTimeout = ioTimeouts(q, o.ReadTimeout, o.WriteTimeout)
		return goredis.NewFailoverClient(o), nil
	case q.Has("cluster") || q.Has("addr"):
		// cluster is ours, not go-redis's: it would reject it.
		if v := q.Get("cluster"); v != "" {
			if on, err := strconv.ParseBool(v); err != nil || !on {
				return nil, fmt.Errorf("store: redis url %s: cluster=%q, want true", redactURL(raw), v)
			}
		}
		q.Del("cluster")
		u.RawQuery = q.Encode()
		o, err := goredis.ParseClusterURL(u.String())
		if err != nil {
			return nil, fmt.Errorf("store: redis cluster url %s: %w", redactURL(raw), err)
		}
		o.ReadTimeout, o.WriteTimeout = ioTimeouts(q, o.ReadTimeout, o.WriteTimeout)
		return goredis.NewClusterClient(o), nil
	default:
		o, err := goredis.ParseURL(raw)
		if err != nil {
			return nil, fmt.Errorf("store: redis url %s: %w", redactURL(raw), err)
		}
		o.ReadTimeout, o.WriteTimeout = ioTimeouts(q, o.ReadTimeout, o.WriteTimeout)
		return goredis.NewClient(o), nil
	}
}

// redactURL hides the passwords so errors can be logged: the URL's own
// and, for Sentinel, the master's in the password and sentinel_password
// parameters.
func redactURL(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return "(unparsable url)"
	}
	q := u.Query()
	hidden := false
	for _, k := range []string{"password", "sentinel_password"} {
		if q.Has(k) {
			q.Set(k, "xxxxx")
			hidden = true
		}
	}
	if hidden {
		u.RawQuery = q.Encode()
	}
	return u.Redacted()
}
