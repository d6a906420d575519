package feed

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"time"

	"github.com/gorilla/websocket"
	"golang.org/x/sync/errgroup"
)

// errChangefeedItemSilence: no change item for ItemSilence; the feed may
// have been taken over by another connection with the same instance.
var errChangefeedItemSilence = errors.New("no change item received; the feed may have been taken over by another connection with the same instance")

// follow runs one established changefeed connection until it fails: the
// listing first, then a fetch for each change item, with one reader and
// one writer goroutine on the websocket. listed reports whether the
// listing reached the sink.
func (v *VMAPI) follow(ctx context.Context, ws *websocket.Conn, sink VMSink) (listed bool, err error) {
	g, gctx := errgroup.WithContext(ctx)
	q := newChangeQueue()
	var lastItem atomic.Int64
	lastItem.Store(time.Now().UnixNano())
	var done atomic.Bool
	g.Go(func() error {
		<-gctx.Done()
		ws.Close() // unblocks the reader
		return gctx.Err()
	})
	g.Go(func() error { return v.read(ws, q, &lastItem) })
	g.Go(func() error { return v.write(gctx, ws, &lastItem) })
	g.Go(func() error {
		l, err := v.listTo(gctx, sink)
		if err != nil {
			return err
		}
		v.changes.Store(q)
		v.verifyOn(q)
		sink.Listing(l)
		done.Store(true)
		v.log.Info("vms listed", "vms", len(l.VMs), "unreadable", len(l.Unreadable))
		return v.work(gctx, q, sink)
	})
	err = g.Wait()
	v.changes.CompareAndSwap(q, nil)
	return done.Load(), err
}

// read queues the uuid of every change item until the connection fails or
// stays silent (no frame, no pong) for Silence.
func (v *VMAPI) read(ws *websocket.Conn, q *changeQueue, lastItem *atomic.Int64) error {
	ws.SetPongHandler(func(string) error {
		return ws.SetReadDeadline(time.Now().Add(v.cfg.Silence))
	})
	for {
		ws.SetReadDeadline(time.Now().Add(v.cfg.Silence))
		typ, b, err := ws.ReadMessage()
		if ce, ok := errors.AsType[*websocket.CloseError](err); ok {
			return fmt.Errorf("changefeed closed: code %d: %s", ce.Code, ce.Text)
		}
		if err != nil {
			return fmt.Errorf("changefeed read: %w", err)
		}
		if typ != websocket.TextMessage {
			continue
		}
		f, err := decodeFrame(b)
		switch {
		case err != nil:
			v.log.Warn("malformed changefeed frame skipped", "bytes", len(b), "err", err)
		case f.bootstrap:
			v.log.Warn("unexpected second bootstrap frame ignored")
		case f.resource != "" && f.resource != "vm":
			v.log.Debug("change item of another resource ignored", "resource", f.resource)
		default:
			lastItem.Store(time.Now().UnixNano())
			q.push(f.id)
		}
	}
}

// write sends the heartbeat text frame and a ping every HeartbeatInterval,
// and ends the connection when no item has come for ItemSilence.
func (v *VMAPI) write(ctx context.Context, ws *websocket.Conn, lastItem *atomic.Int64) error {
	t := time.NewTicker(v.cfg.HeartbeatInterval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-t.C:
		}
		quiet := time.Since(time.Unix(0, lastItem.Load()))
		if v.cfg.ItemSilence > 0 && quiet > v.cfg.ItemSilence {
			return fmt.Errorf("%w (quiet for %v)", errChangefeedItemSilence, quiet.Round(time.Millisecond))
		}
		deadline := time.Now().Add(v.cfg.Silence)
		ws.SetWriteDeadline(deadline)
		if err := ws.WriteMessage(websocket.TextMessage, []byte("heartbeat")); err != nil {
			return fmt.Errorf("changefeed heartbeat: %w", err)
		}
		if err := ws.WriteControl(websocket.PingMessage, nil, deadline); err != nil {
			return fmt.Errorf("changefeed ping: %w", err)
		}
	}
}
