package store

import (
	"context"
	"time"
)

// Run commits pending contributions as they become due until ctx ends,
// then returns nil. What is still pending then is not committed: the
// feed lists everything again when cnsd starts.
func (b *Batcher) Run(ctx context.Context) error {
	var backoff time.Duration
	var retryAt time.Time
	timer := time.NewTimer(time.Hour)
	defer timer.Stop()
	for ctx.Err() == nil {
		wait, ok := b.due()
		if ok && backoff > 0 {
			wait = max(wait, retryAt.Sub(b.now()))
		}
		if ok && wait <= 0 {
			if err := b.commitDue(ctx); err != nil && ctx.Err() == nil {
				backoff = min(max(2*backoff, minBackoff), maxBackoff)
				retryAt = b.now().Add(backoff)
				b.log.Error("commit failed; keeping the contributions and retrying", "err", err, "retry_in", backoff)
			} else {
				backoff = 0
			}
			continue
		}
		var fire <-chan time.Time
		if ok {
			timer.Reset(wait)
			fire = timer.C
		}
		select {
		case <-ctx.Done():
			return nil
		case <-b.kick:
		case <-fire:
		}
		timer.Stop()
	}
	return nil
}

// commitDue commits what is pending; on error it is put back.
func (b *Batcher) commitDue(ctx context.Context) error {
	b.commitMu.Lock()
	defer b.commitMu.Unlock()
	batch := b.take()
	if len(batch) == 0 {
		return nil
	}
	before := b.before(batch)
	changes, built, err := b.s.commitRecorded(ctx, batch)
	if err != nil {
		b.putBack(batch)
		b.landed()
		return err
	}
	b.commits.Add(1)
	b.log.Debug("committed", "vms", len(batch), "zones", len(changes))
	b.report(batch, before, changes)
	// The commit has landed before its memory is given back: what
	// waits for nothing pending (Pending) need not wait for that too,
	// half a second after a bootstrap's commit.
	b.landed()
	// Last: the changes are garbage by now, and their memory goes back
	// with the rest of a bootstrap's.
	b.s.releaseAfterBuild(built)
	return nil
}

// landed ends the count of a commit under way.
func (b *Batcher) landed() {
	b.mu.Lock()
	b.inflight = 0
	b.mu.Unlock()
}
