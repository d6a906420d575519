package store

import (
	"context"
	"fmt"
)

// Acquire waits until the lease is free and takes it with a new epoch.
// Handing out the epoch also fences every older one, so a writer that has
// lost the lease cannot write even before the new holder has.
func (m *Memory) Acquire(ctx context.Context) (uint64, error) {
	for {
		m.mu.Lock()
		if m.holder == 0 {
			m.lastEpoch = max(m.lastEpoch, m.fence) + 1
			m.holder, m.fence = m.lastEpoch, m.lastEpoch
			epoch := m.holder
			m.leaseChangedLocked()
			m.mu.Unlock()
			return epoch, nil
		}
		wait := m.leaseCh
		m.mu.Unlock()
		select {
		case <-ctx.Done():
			return 0, fmt.Errorf("memory acquire lease: %w", ctx.Err())
		case <-wait:
		}
	}
}

// Keep holds the lease until ctx ends (nil) or the lease is no longer
// epoch's (ErrFenced). A Memory lease never expires; it is lost only when
// it is released.
func (m *Memory) Keep(ctx context.Context, epoch uint64) error {
	for {
		m.mu.Lock()
		held, wait := m.holder == epoch, m.leaseCh
		m.mu.Unlock()
		if !held {
			return fmt.Errorf("memory keep lease %d: %w", epoch, ErrFenced)
		}
		select {
		case <-ctx.Done():
			return nil
		case <-wait:
		}
	}
}

// Release frees the lease if epoch holds it.
func (m *Memory) Release(ctx context.Context, epoch uint64) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.holder == epoch {
		m.holder = 0
		m.leaseChangedLocked()
	}
	return nil
}

func (m *Memory) leaseChangedLocked() {
	close(m.leaseCh)
	m.leaseCh = make(chan struct{})
}
