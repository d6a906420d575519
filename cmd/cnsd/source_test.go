package main

import (
	"context"
	"testing"
	"time"

	"github.com/cnsd/cnsd/store"
)

// TestSourceFollowSwitchesInOrder: the store followed last is the one
// served, whenever the goroutines of the stores followed before it run.
// A takeover follows the writer's store right after it stopped following
// the follower's; the switch used to be made in the goroutine follow
// started, so that a follower's goroutine scheduled after the writer's
// put the follower's store back (TestRedisWithoutAOF failed so about once
// in 50 runs on a loaded machine: SERVFAIL for a zone the writer held),
// and the process served zones nobody followed any more.
func TestSourceFollowSwitchesInOrder(t *testing.T) {
	ctx := context.Background()
	open := func() *store.Store {
		st, err := store.Open(ctx, store.NewMemory(), store.Options{}, nil)
		if err != nil {
			t.Fatal(err)
		}
		return st
	}
	for range 100 {
		follower, writer := open(), open()
		src := &source{}
		watch := src.Watch()
		followCtx, stopFollowing := context.WithCancel(ctx)
		following := src.follow(followCtx, follower)
		if src.cur.Load() != follower {
			t.Fatal("follow returned before making the follower's store current")
		}
		stopFollowing()
		leadCtx, stopLeading := context.WithCancel(ctx)
		leading := src.follow(leadCtx, writer)
		<-following
		if src.cur.Load() != writer {
			t.Fatal("the follower's store is current again after the writer's was followed")
		}
		// The writer's changes reach the watchers; the follower's no
		// longer make it current.
		for len(watch) > 0 {
			<-watch
		}
		if err := writer.Keep(ctx, []string{"a.example.test."}); err != nil {
			t.Fatal(err)
		}
		select {
		case <-watch:
		case <-time.After(10 * time.Second):
			t.Fatal("a change of the writer's store did not reach the source's watchers")
		}
		if err := follower.Keep(ctx, []string{"b.example.test."}); err != nil {
			t.Fatal(err)
		}
		if src.cur.Load() != writer || src.Snapshot("a.example.test.") == nil {
			t.Fatal("the source does not serve the writer's zone")
		}
		stopLeading()
		<-leading
	}
}
