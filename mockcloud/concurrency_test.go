package mockcloud

import (
	"fmt"
	"net/http"
	"sync"
	"testing"

	"github.com/gorilla/websocket"
)

// TestConcurrentUse runs churn, listings, subscriptions and cuts at once,
// for the race detector; it checks only that nothing breaks.
func TestConcurrentUse(t *testing.T) {
	c, srv := newTestCloud(t)
	var wg sync.WaitGroup
	for i := range 3 {
		ws := subscribeV1(t, srv, fmt.Sprint("reader", i), VMResource.SubResources...)
		wg.Go(func() {
			for {
				if _, _, err := ws.ReadMessage(); err != nil {
					return // cut by DisconnectAll below
				}
			}
		})
	}
	for seed := range uint64(3) {
		wg.Go(func() {
			rng := NewRand(seed)
			for range 100 {
				c.ChurnStep(rng)
			}
		})
	}
	wg.Go(func() {
		for range 20 {
			resp, err := http.Get(srv.URL + "/vms?state=active&limit=5")
			if err != nil {
				t.Error(err)
				return
			}
			resp.Body.Close()
		}
	})
	wg.Go(func() {
		for range 5 {
			ws, _, err := websocket.DefaultDialer.Dial("ws"+srv.URL[len("http"):]+"/changefeeds", nil)
			if err != nil {
				t.Error(err)
				return
			}
			ws.WriteJSON(v1Registration("churned", "state"))
			ws.Close()
		}
	})
	c.DisconnectAll()
	// Readers registered before the cut end; stragglers end at cleanup.
	c.DisconnectAll()
	wg.Wait()
}
