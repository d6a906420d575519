package feed

import (
	"slices"
	"sync"
)

// changeQueue holds the uuids of VMs with changes not yet fetched, each
// once: duplicate items (one per subscribed subResource) and bursts of
// changes to one VM cost a single fetch. A uuid being fetched is not
// handed out again until done, so that two fetches of one VM never race
// and deliver the older VM last; a change arriving meanwhile queues it for
// one more fetch after.
type changeQueue struct {
	ready chan struct{} // capacity 1: something may be ready to pop

	mu       sync.Mutex // guards order, pending and inflight
	order    []string
	pending  map[string]bool
	inflight map[string]bool
}

func newChangeQueue() *changeQueue {
	return &changeQueue{ready: make(chan struct{}, 1), pending: map[string]bool{}, inflight: map[string]bool{}}
}

func (q *changeQueue) signal() {
	select {
	case q.ready <- struct{}{}:
	default:
	}
}

// push queues uuid unless it is already queued.
func (q *changeQueue) push(uuid string) {
	q.mu.Lock()
	if !q.pending[uuid] {
		q.pending[uuid] = true
		q.order = append(q.order, uuid)
	}
	q.mu.Unlock()
	q.signal()
}

// pop takes the oldest queued uuid that is not being fetched and marks it
// as being fetched; done must follow. It wakes another worker when more
// remain, so that a burst is fetched in parallel.
func (q *changeQueue) pop() (string, bool) {
	q.mu.Lock()
	defer q.mu.Unlock()
	for i, uuid := range q.order {
		if q.inflight[uuid] {
			continue
		}
		if i == 0 {
			q.order[0] = ""
			q.order = q.order[1:]
		} else {
			q.order = slices.Delete(q.order, i, i+1)
		}
		delete(q.pending, uuid)
		q.inflight[uuid] = true
		if len(q.order) > 0 {
			q.signal()
		}
		return uuid, true
	}
	return "", false
}

// done ends the fetch of uuid.
func (q *changeQueue) done(uuid string) {
	q.mu.Lock()
	delete(q.inflight, uuid)
	again := q.pending[uuid]
	q.mu.Unlock()
	if again {
		q.signal()
	}
}
