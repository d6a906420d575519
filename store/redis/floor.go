package redis

import (
	"context"
	"errors"
	"fmt"
	"strconv"

	"github.com/cnsd/cnsd/store"
	goredis "github.com/redis/go-redis/v9"
)

// Serial floors in Redis (store's floor.go): the apply script of a drop sets the
// zone's floor key, {cnsd:z:<zone>}:floor, in the same atomic step that
// deletes its other keys; the key shares the zone's hash tag, so this
// holds in Redis Cluster too. The names of zones with a floor are listed
// in the set {cnsd}:floors, added before the drop is sent: a crash in
// between leaves a listed name without a floor key (skipped), never an
// unlisted floor.
const redisFloorsKey = "{cnsd}:floors"

// listFloors adds the zones changes drop to the floor set.
func (r *Backend) listFloors(ctx context.Context, changes []store.ZoneChange) error {
	var zones []any
	for _, c := range changes {
		if c.Drop && c.Prev != 0 {
			zones = append(zones, c.Zone)
		}
	}
	if len(zones) == 0 {
		return nil
	}
	if err := r.c.SAdd(ctx, redisFloorsKey, zones...).Err(); err != nil {
		return fmt.Errorf("store: redis list floors of %v: %w", zones, err)
	}
	return nil
}

// Floors reads the floor of every listed zone. A value that is not a
// serial fails the read with its key: silently skipping it could let a
// zone go back.
func (r *Backend) Floors(ctx context.Context) (map[string]store.Serial, error) {
	zones, err := r.c.SMembers(ctx, redisFloorsKey).Result()
	if err != nil {
		return nil, fmt.Errorf("store: redis list floors: %w", err)
	}
	cmds := make([]*goredis.StringCmd, len(zones))
	_, err = r.c.Pipelined(ctx, func(p goredis.Pipeliner) error {
		for i, z := range zones {
			cmds[i] = p.Get(ctx, zoneKeys(z).floor)
		}
		return nil
	})
	if err != nil && !errors.Is(err, goredis.Nil) {
		return nil, fmt.Errorf("store: redis read floors: %w", err)
	}
	floors := make(map[string]store.Serial, len(zones))
	for i, z := range zones {
		v, err := cmds[i].Result()
		if errors.Is(err, goredis.Nil) {
			continue
		}
		s, err := strconv.ParseUint(v, 10, 32)
		if err != nil {
			return nil, fmt.Errorf("store: redis %s: %q is not a serial: %w", zoneKeys(z).floor, v, err)
		}
		floors[z] = store.Serial(s)
	}
	return floors, nil
}
