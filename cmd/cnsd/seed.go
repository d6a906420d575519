package main

import (
	"context"
	"fmt"
	"log/slog"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/cnsd/cnsd/store"
	"github.com/cnsd/cnsd/xfr"
)

// peerSerialTimeout bounds how long a writer starting on a fresh store
// waits for its secondaries' serials; one that has not answered by then
// is skipped.
const peerSerialTimeout = 2 * time.Second

// seedFromPeers asks the secondaries of a fresh store's zones for the
// serials they hold (from an earlier store: the embedded one before a
// move to Redis, or a lost file) and seeds them as the zones' floors, so
// that each zone starts above them and the secondaries take it at once
// instead of ignoring cnsd until its serials pass theirs.
func seedFromPeers(ctx context.Context, st *store.Store, srv *xfr.Server, log *slog.Logger) {
	if srv == nil {
		return
	}
	log.Info("a new store: asking the secondaries for the serials they hold", "timeout", peerSerialTimeout)
	taken := st.SeedFloors(srv.PeerSerials(ctx, peerSerialTimeout))
	if len(taken) == 0 {
		log.Info("a new store: no secondary holds a zone; serials start from the clock")
		return
	}
	var parts []string
	for _, zone := range slices.Sorted(maps.Keys(taken)) {
		parts = append(parts, fmt.Sprintf("%s=%d", zone, taken[zone]))
	}
	log.Info("a new store: zones start above the serials the secondaries hold", "serials", strings.Join(parts, " "))
}
