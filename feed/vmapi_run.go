package feed

import (
	"context"
	"errors"
	"fmt"
	"time"
)

// Run follows VMAPI until ctx ends, then returns nil. Each (re)connect of
// the changefeed is followed by a full listing, because the changefeed
// has no replay: whatever changed while disconnected is only in the
// listing. While the changefeed cannot be established, Run re-lists every
// ListInterval and keeps trying it with back-off. Run returns an error
// only for a configuration that cannot work.
func (v *VMAPI) Run(ctx context.Context, sink VMSink) error {
	if v.cfg.URL == "" || v.cfg.Instance == "" {
		return fmt.Errorf("%w: url and instance are required", ErrVMAPIConfig)
	}
	var (
		attempt  int
		down     bool      // the last attempt to establish the feed failed
		lastList time.Time // of the fallback listing; zero: list at once
	)
	for ctx.Err() == nil {
		ws, err := v.connect(ctx)
		if err == nil {
			if down {
				v.log.Info("changefeed established again; periodic re-listing stopped")
				down = false
			}
			v.connected.Store(true)
			listed, err := v.follow(ctx, ws, sink)
			v.connected.Store(false)
			ws.Close()
			if ctx.Err() != nil {
				break
			}
			v.sessionEnded(err)
			lastList = time.Time{}
			attempt++
			if listed {
				attempt = 0
			}
		} else if ctx.Err() == nil {
			v.feedDown(err, !down)
			down = true
			if time.Since(lastList) >= v.cfg.ListInterval {
				lastList = v.relist(ctx, sink, lastList)
			}
			attempt++
		}
		if !vmapiSleep(ctx, v.backoff(attempt)) {
			break
		}
	}
	return nil
}

// feedDown logs a failure to establish the changefeed: once loudly when
// the feed goes down, then quietly for each further attempt.
func (v *VMAPI) feedDown(err error, first bool) {
	switch {
	case !first:
		v.log.Debug("changefeed still unavailable", "err", err)
	case errors.Is(err, errChangefeedRefused):
		v.log.Error("changefeed refused by VMAPI; re-listing VMs periodically instead",
			"interval", v.cfg.ListInterval, "err", err)
	default:
		v.log.Warn("changefeed unavailable; re-listing VMs periodically until it is back",
			"interval", v.cfg.ListInterval, "err", err)
	}
}

// relist is the fallback listing; it returns the new time of the last
// listing (unchanged when listing failed, so the next attempt lists).
func (v *VMAPI) relist(ctx context.Context, sink VMSink, last time.Time) time.Time {
	v.verifyNow(ctx, sink)
	l, err := v.listTo(ctx, sink)
	if err != nil {
		if ctx.Err() == nil {
			v.log.Warn("periodic vm listing failed", "err", err)
		}
		return last
	}
	sink.Listing(l)
	v.log.Info("vms re-listed without changefeed", "vms", len(l.VMs), "unreadable", len(l.Unreadable))
	return time.Now()
}

// sessionEnded logs the end of an established changefeed connection. Item
// silence is routine on a quiet cloud, so it is not a warning.
func (v *VMAPI) sessionEnded(err error) {
	if errors.Is(err, errChangefeedItemSilence) {
		v.log.Info("changefeed session ended; reconnecting", "err", err)
		return
	}
	v.log.Warn("changefeed session ended; reconnecting", "err", err)
}
