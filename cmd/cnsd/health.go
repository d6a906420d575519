package main

import (
	"context"
	"fmt"
	"sync/atomic"

	"github.com/cnsd/cnsd/api"
	"github.com/cnsd/cnsd/store/redis"
)

// health is what GET /ready and the store metrics report: whether the
// zones were loaded, whether Redis answers, whether this process writes
// and whether it refuses to for want of an append-only file.
type health struct {
	src    *source        // the zones served, and the store written
	redis  *redis.Backend // nil for the embedded store
	loaded atomic.Bool    // the zones were loaded from the store
	writer atomic.Bool    // this process holds the writer lease
	// restored counts the zones written back by the stores this process
	// wrote with before the current one (store.Store.ZonesRestored).
	restored atomic.Int64
}

var _ api.Health = (*health)(nil)

// NotReady lists why the process is not ready. DNS is answered from the
// zones last loaded whatever it says.
func (h *health) NotReady(ctx context.Context) []string {
	var out []string
	if !h.loaded.Load() {
		out = append(out, "the zones have not been loaded from the store yet")
	}
	if st := h.src.writer.Load(); st != nil {
		if err := st.CommitError(); err != nil {
			out = append(out, fmt.Sprintf("commits fail (%v): DNS is answered from the zones last committed and the changes are kept in memory and retried", err))
		}
	}
	if h.redis == nil {
		return out
	}
	if err := h.redis.Ping(ctx); err != nil {
		out = append(out, fmt.Sprintf("redis is unreachable (%v): DNS is answered from the zones last loaded and the writer keeps the changes in memory until it returns", err))
	}
	if d := h.redis.Durability(); !d.Checked.IsZero() {
		if err := d.Err(); err != nil {
			out = append(out, fmt.Sprintf("cnsd refuses to write: %v", err))
		}
	}
	return out
}

// Writer reports whether this process holds the writer lease.
func (h *health) Writer() bool { return h.writer.Load() }

// Store reports the store for the metrics.
func (h *health) Store(ctx context.Context) api.StoreStatus {
	st := api.StoreStatus{Up: true, Writer: h.writer.Load(), ZonesRestored: h.restored.Load()}
	if w := h.src.writer.Load(); w != nil {
		st.ZonesRestored += w.ZonesRestored()
	}
	if h.redis == nil {
		return st
	}
	st.Up = h.redis.Ping(ctx) == nil
	if d := h.redis.Durability(); !d.Checked.IsZero() {
		st.WritesRefused = d.Err() != nil
		st.Redis = &api.RedisPersistence{AppendFsync: d.AppendFsync, Replicas: d.Replicas, CommitsHeld: h.redis.CommitsHeld()}
		switch {
		case d.Unverifiable != nil:
			st.Redis.AOF = -1
		case d.AppendOnly:
			st.Redis.AOF = 1
		}
	}
	return st
}
