package feed

import (
	"slices"
	"testing"
	"time"
)

func TestBackoff(t *testing.T) {
	v := NewVMAPI(VMAPIConfig{MinBackoff: time.Second, MaxBackoff: time.Minute}, nil)
	tests := []struct {
		attempt int
		lo, hi  time.Duration
	}{
		{0, 500 * time.Millisecond, time.Second},
		{1, time.Second, 2 * time.Second},
		{3, 4 * time.Second, 8 * time.Second},
		{6, 30 * time.Second, time.Minute},
		{7, 30 * time.Second, time.Minute},
		{1000, 30 * time.Second, time.Minute},
	}
	for _, tt := range tests {
		for range 50 {
			if d := v.backoff(tt.attempt); d < tt.lo || d > tt.hi {
				t.Errorf("backoff(%d) = %v, want within [%v, %v]", tt.attempt, d, tt.lo, tt.hi)
			}
		}
	}
}

func TestWithDefaults(t *testing.T) {
	got := withVMAPIDefaults(VMAPIConfig{Limit: 5000, HeartbeatInterval: time.Second})
	if got.Limit != DefaultVMAPILimit || got.Fetchers != DefaultVMAPIFetchers || got.MinBackoff != DefaultVMAPIMinBackoff || got.MaxBackoff != DefaultVMAPIMaxBackoff ||
		got.ListInterval != DefaultVMAPIListInterval || got.Silence != 3*time.Second ||
		got.ItemSilence != DefaultVMAPIItemSilence || got.HTTPClient == nil {
		t.Errorf("withVMAPIDefaults = %+v", got)
	}
	if got := withVMAPIDefaults(VMAPIConfig{}); got.HeartbeatInterval != DefaultVMAPIHeartbeat || got.Silence != 3*DefaultVMAPIHeartbeat {
		t.Errorf("withVMAPIDefaults heartbeat %v silence %v", got.HeartbeatInterval, got.Silence)
	}
}

func TestChangeQueue(t *testing.T) {
	q := newChangeQueue()
	for _, id := range []string{"a", "b", "a", "c", "b"} {
		q.push(id)
	}
	pop := func() string {
		id, _ := q.pop()
		return id
	}
	var got []string
	got = append(got, pop())
	q.push("a") // a change during the fetch of a queues it again…
	got = append(got, pop(), pop(), pop())
	q.done("a") // …for after that fetch
	got = append(got, pop(), pop())
	if want := []string{"a", "b", "c", "", "a", ""}; !slices.Equal(got, want) {
		t.Errorf("popped %q, want %q", got, want)
	}
}
