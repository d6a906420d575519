package feed

import "sync"

// changeQueue holds the uuids of VMs with changes not yet fetched, each
// once: duplicate items (one per subscribed subResource) and bursts of
// changes to one VM cost a single fetch. A uuid being fetched is no longer
// queued, so a change arriving during the fetch queues it again.
type changeQueue struct {
	ready chan struct{} // capacity 1: something was queued

	mu      sync.Mutex // guards order and pending
	order   []string
	pending map[string]bool
}

func newChangeQueue() *changeQueue {
	return &changeQueue{ready: make(chan struct{}, 1), pending: map[string]bool{}}
}

// push queues uuid unless it is already queued.
func (q *changeQueue) push(uuid string) {
	q.mu.Lock()
	if !q.pending[uuid] {
		q.pending[uuid] = true
		q.order = append(q.order, uuid)
	}
	q.mu.Unlock()
	select {
	case q.ready <- struct{}{}:
	default:
	}
}

// pop takes the oldest queued uuid.
func (q *changeQueue) pop() (string, bool) {
	q.mu.Lock()
	defer q.mu.Unlock()
	if len(q.order) == 0 {
		return "", false
	}
	uuid := q.order[0]
	q.order[0] = ""
	q.order = q.order[1:]
	delete(q.pending, uuid)
	return uuid, true
}
