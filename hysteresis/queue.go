package hysteresis

import "container/heap"

// requests is a service's pending self-removals as a min-heap in FIFO
// order: earliest request first, ties by member id, so that the order does
// not depend on map iteration or call order within one instant. Each
// member keeps its heap index so that a return to Up or a hard removal can
// drop its request in O(log n).
type requests []*entry

var _ heap.Interface = (*requests)(nil)

func (q requests) Len() int { return len(q) }

func (q requests) Less(i, j int) bool { return q[i].before(q[j]) }

func (q requests) Swap(i, j int) {
	q[i], q[j] = q[j], q[i]
	q[i].index = i
	q[j].index = j
}

func (q *requests) Push(x any) {
	m := x.(*entry)
	m.index = len(*q)
	*q = append(*q, m)
}

func (q *requests) Pop() any {
	old := *q
	m := old[len(old)-1]
	old[len(old)-1] = nil // let a removed member be collected
	m.index = -1
	*q = old[:len(old)-1]
	return m
}

// schedule is the tracker's services that have pending requests, as a
// min-heap by the earliest time one of them can take effect (ties by
// service key), so that Advance and NextDue touch only services with
// something due instead of scanning all of them.
type schedule []*service

var _ heap.Interface = (*schedule)(nil)

func (h schedule) Len() int { return len(h) }

func (h schedule) Less(i, j int) bool {
	if !h[i].due.Equal(h[j].due) {
		return h[i].due.Before(h[j].due)
	}
	return h[i].key < h[j].key
}

func (h schedule) Swap(i, j int) {
	h[i], h[j] = h[j], h[i]
	h[i].index = i
	h[j].index = j
}

func (h *schedule) Push(x any) {
	s := x.(*service)
	s.index = len(*h)
	*h = append(*h, s)
}

func (h *schedule) Pop() any {
	old := *h
	s := old[len(old)-1]
	old[len(old)-1] = nil
	s.index = -1
	*h = old[:len(old)-1]
	return s
}
