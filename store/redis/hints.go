// Serial hints from followers (store.SerialHinter).

package redis

import (
	"context"
	"fmt"
	"strconv"

	"github.com/cnsd/cnsd/store"
	goredis "github.com/redis/go-redis/v9"
)

// redisHintScript raises a zone's hint to a serial unless it holds a
// later one in RFC 1982 order. KEYS: {cnsd}:seen. ARGV: zone, serial.
var redisHintScript = goredis.NewScript(`
local cur = redis.call('HGET', KEYS[1], ARGV[1])
if cur then
  local d = (tonumber(ARGV[2]) - tonumber(cur)) % 4294967296
  if d == 0 or d >= 2147483648 then return 0 end
end
redis.call('HSET', KEYS[1], ARGV[1], ARGV[2])
return 1
`)

// redisClearHintScript deletes a zone's hint if it still holds serial.
// KEYS: {cnsd}:seen. ARGV: zone, serial.
var redisClearHintScript = goredis.NewScript(`
if redis.call('HGET', KEYS[1], ARGV[1]) == ARGV[2] then
  redis.call('HDEL', KEYS[1], ARGV[1])
end
return 0
`)

// HintSerial records that a follower serves zone at serial (or saw it
// dropped there) while the store holds it at or below that.
func (r *Backend) HintSerial(ctx context.Context, zone string, serial store.Serial) error {
	if err := redisHintScript.Run(ctx, r.c, []string{redisSeenKey}, zone, uint32(serial)).Err(); err != nil {
		return fmt.Errorf("store: redis hint serial %d of zone %s: %w", serial, zone, err)
	}
	return nil
}

// SerialHints returns every zone's hint. A value that is not a serial is
// skipped.
func (r *Backend) SerialHints(ctx context.Context) (map[string]store.Serial, error) {
	raw, err := r.c.HGetAll(ctx, redisSeenKey).Result()
	if err != nil {
		return nil, fmt.Errorf("store: redis read %s: %w", redisSeenKey, err)
	}
	out := make(map[string]store.Serial, len(raw))
	for zone, v := range raw {
		if n, err := strconv.ParseUint(v, 10, 32); err == nil {
			out[zone] = store.Serial(n)
		}
	}
	return out, nil
}

// ClearSerialHint deletes zone's hint if it is still serial.
func (r *Backend) ClearSerialHint(ctx context.Context, zone string, serial store.Serial) error {
	if err := redisClearHintScript.Run(ctx, r.c, []string{redisSeenKey}, zone, uint32(serial)).Err(); err != nil {
		return fmt.Errorf("store: redis clear serial hint of zone %s: %w", zone, err)
	}
	return nil
}
