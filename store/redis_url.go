package store

import (
	"fmt"
	"net/url"
	"strconv"

	"github.com/redis/go-redis/v9"
)

// newRedisClient picks the client kind from the URL. It parses with the
// go-redis parser of that kind and builds the client NewUniversalClient
// would build, but from the full parsed options: converting to
// UniversalOptions would drop settings such as TLS server names.
func newRedisClient(raw string) (redis.UniversalClient, error) {
	u, err := url.Parse(raw)
	if err != nil {
		return nil, fmt.Errorf("store: redis url: %w", err)
	}
	q := u.Query()
	switch {
	case q.Has("master_name"):
		o, err := redis.ParseFailoverURL(raw)
		if err != nil {
			return nil, fmt.Errorf("store: redis sentinel url %s: %w", redactURL(raw), err)
		}
		return redis.NewFailoverClient(o), nil
	case q.Has("cluster") || q.Has("addr"):
		// cluster is ours, not go-redis's: it would reject it.
		if v := q.Get("cluster"); v != "" {
			if on, err := strconv.ParseBool(v); err != nil || !on {
				return nil, fmt.Errorf("store: redis url %s: cluster=%q, want true", redactURL(raw), v)
			}
		}
		q.Del("cluster")
		u.RawQuery = q.Encode()
		o, err := redis.ParseClusterURL(u.String())
		if err != nil {
			return nil, fmt.Errorf("store: redis cluster url %s: %w", redactURL(raw), err)
		}
		return redis.NewClusterClient(o), nil
	default:
		o, err := redis.ParseURL(raw)
		if err != nil {
			return nil, fmt.Errorf("store: redis url %s: %w", redactURL(raw), err)
		}
		return redis.NewClient(o), nil
	}
}

// redactURL hides a password so errors can be logged.
func redactURL(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return "(unparsable url)"
	}
	return u.Redacted()
}
