package redis

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/cnsd/cnsd/store"
	goredis "github.com/redis/go-redis/v9"

	"github.com/cnsd/cnsd/store/redistest"
)

// durabilityZone is the zone the durability tests try to create.
const durabilityZone = "durable.example."

// applyNewZone tries to create durabilityZone at serial 1.
func applyNewZone(r *Backend, next store.Serial) error {
	c := store.ZoneChange{Zone: durabilityZone, Prev: next - 1, Next: next, KeepJournal: 10,
		SetVMs: map[string][]store.Record{"vm1": {redisA(durabilityZone, "a", "192.0.2.1", "vm1")}},
		Diff:   store.Diff{Zone: durabilityZone, From: next - 1, To: next}}
	return r.Apply(context.Background(), 1, []store.ZoneChange{c})
}

func TestRedisDurability(t *testing.T) {
	for _, tc := range []struct {
		name         string
		args         []string
		accept       bool
		appendOnly   bool
		fsync        string
		unverifiable bool
		writable     bool
	}{
		{name: "aof always", appendOnly: true, fsync: "always", writable: true},
		{name: "aof everysec", args: []string{"--appendfsync", "everysec"}, appendOnly: true, fsync: "everysec", writable: true},
		{name: "rdb only", args: []string{"--appendonly", "no", "--save", "60 1"}, fsync: "always"},
		{name: "rdb only, risk accepted", args: []string{"--appendonly", "no"}, accept: true, fsync: "always", writable: true},
		{name: "config renamed", args: []string{"--rename-command", "CONFIG", ""}, unverifiable: true},
		{name: "config renamed, risk accepted", args: []string{"--rename-command", "CONFIG", ""}, accept: true,
			unverifiable: true, writable: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := redistest.Start(t, redistest.WithArgs(tc.args...))
			r := openRedisAt(t, srv.URL(), Options{AcceptNoAOF: tc.accept})
			d, err := r.CheckDurability(context.Background())
			redisMust(t, err)
			if d.AppendOnly != tc.appendOnly || d.Writable() != tc.writable || (d.Unverifiable != nil) != tc.unverifiable {
				t.Fatalf("CheckDurability = %+v; want appendonly %v, writable %v, unverifiable %v",
					d, tc.appendOnly, tc.writable, tc.unverifiable)
			}
			if !tc.unverifiable && d.AppendFsync != tc.fsync {
				t.Errorf("appendfsync = %q, want %q", d.AppendFsync, tc.fsync)
			}
			err = applyNewZone(r, 1)
			if tc.writable {
				redisMust(t, err)
			} else if !errors.Is(err, store.ErrNotDurable) {
				t.Fatalf("Apply to a Redis without AOF = %v, want ErrNotDurable", err)
			}
			if written := redisLoad(t, r)[durabilityZone] != nil; written != tc.writable {
				t.Fatalf("zone written: %v, want %v", written, tc.writable)
			}
			if !tc.writable {
				t.Logf("refused: %v", err)
			}
		})
	}
}

// TestRedisDurabilityRechecked: Apply checks again every
// DurabilityInterval, so turning AOF off stops writes and turning it on
// again lets them through, without a new client.
func TestRedisDurabilityRechecked(t *testing.T) {
	srv := redistest.Start(t)
	const interval = 50 * time.Millisecond
	r := openRedisAt(t, srv.URL(), Options{DurabilityInterval: interval})
	admin := goredis.NewClient(&goredis.Options{Addr: srv.Addr()})
	defer admin.Close()
	ctx := context.Background()

	redisMust(t, applyNewZone(r, 1))
	redisMust(t, admin.ConfigSet(ctx, "appendonly", "no").Err())
	time.Sleep(2 * interval)
	if err := applyNewZone(r, 2); !errors.Is(err, store.ErrNotDurable) {
		t.Fatalf("Apply after appendonly no = %v, want ErrNotDurable", err)
	}
	if d := r.Durability(); d.AppendOnly {
		t.Fatalf("Durability after appendonly no = %+v", d)
	}
	redisMust(t, admin.ConfigSet(ctx, "appendonly", "yes").Err())
	time.Sleep(2 * interval)
	redisMust(t, applyNewZone(r, 2))
	if s := redisLoad(t, r)[durabilityZone].Serial; s != 2 {
		t.Fatalf("serial %d after AOF came back, want 2", s)
	}
}
