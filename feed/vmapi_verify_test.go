package feed

import (
	"context"
	"net/http"
	"net/http/httptest"
	"testing"
)

// TestVMAPIVerify: the VMs Verify names are fetched as change items are,
// over the changefeed session or, without one, before the next periodic
// listing: one VMAPI has comes back Changed, one it does not know Gone.
func TestVMAPIVerify(t *testing.T) {
	for _, withFeed := range []bool{true, false} {
		name := "changefeed"
		if !withFeed {
			name = "periodic listing"
		}
		t.Run(name, func(t *testing.T) {
			c := newVMCloud(10)
			h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if r.URL.Path == "/changefeeds" && !withFeed {
					http.Error(w, `{"code":"ResourceNotFound"}`, http.StatusNotFound)
					return
				}
				c.Handler().ServeHTTP(w, r)
			})
			srv := httptest.NewServer(h)
			t.Cleanup(srv.Close)
			sink := &vmSinkRecorder{}
			v := NewVMAPI(vmapiTestConfig(srv.URL), nil)
			ctx, cancel := context.WithCancel(context.Background())
			finished := make(chan struct{})
			go func() { _ = v.Run(ctx, sink); close(finished) }()
			t.Cleanup(func() { cancel(); <-finished })
			vmWaitFor(t, "a listing", func() bool { return sink.numListings() > 0 })
			kept, unknown := activeUUIDs(c)[0], "00000000-0000-4000-8000-00000000dead"
			v.Verify([]string{kept, unknown})
			vmWaitFor(t, "Changed of the VM VMAPI has", func() bool { return len(sink.changedOf(kept)) > 0 })
			vmWaitFor(t, "Gone of the VM it does not know", func() bool { return sink.isGone(unknown) })
			v.verifyMu.Lock()
			left := len(v.verifying)
			v.verifyMu.Unlock()
			if left != 0 {
				t.Errorf("%d VMs still being asked about after both answers", left)
			}
		})
	}
}
