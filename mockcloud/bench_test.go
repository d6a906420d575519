package mockcloud

import (
	"fmt"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"

	"github.com/gorilla/websocket"
)

// BenchmarkPublish measures one mutation fanned out to 10 subscribers of
// every subResource (two copies each for a tags change).
func BenchmarkPublish(b *testing.B) {
	c := New(Generate(GenOptions{VMs: 100, Accounts: 5, Servers: 3, Seed: 1}), nil)
	srv := httptest.NewServer(c.Handler())
	defer srv.Close()
	defer c.DisconnectAll()
	for i := range 10 {
		ws, _, err := websocket.DefaultDialer.Dial("ws"+strings.TrimPrefix(srv.URL, "http")+"/changefeeds", nil)
		if err != nil {
			b.Fatal(err)
		}
		ws.WriteJSON(v1Registration(fmt.Sprint("bench", i), VMResource.SubResources...))
		go func() {
			for {
				if _, _, err := ws.ReadMessage(); err != nil {
					return
				}
			}
		}()
	}
	uuid := c.Fixture().VMs[0].UUID
	tags := map[string]any{"triton.cns.services": "web:80"}
	b.ResetTimer()
	for i := range b.N {
		tags["n"] = i
		if _, err := c.SetTags(uuid, tags); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkListVMs measures one 1000-VM page of a 5000-VM cloud.
func BenchmarkListVMs(b *testing.B) {
	c := New(Generate(GenOptions{VMs: 5000, Accounts: 50, Servers: 20, Seed: 1}), nil)
	h := c.Handler()
	b.ResetTimer()
	for range b.N {
		w := httptest.NewRecorder()
		h.ServeHTTP(w, httptest.NewRequest("GET", "/vms?state=active&limit=1000", nil))
		if w.Code != 200 {
			b.Fatal(w.Code)
		}
	}
}

// BenchmarkListVMsMarker measures one 1000-VM page of a 5000-VM cloud
// continued from a marker in the middle, as cnsd pages its listing.
func BenchmarkListVMsMarker(b *testing.B) {
	c := New(Generate(GenOptions{VMs: 5000, Accounts: 50, Servers: 20, Seed: 1}), nil)
	h := c.Handler()
	c.mu.Lock()
	middle := c.sortedLocked()[2500]
	c.mu.Unlock()
	path := "/vms?state=active&limit=1000&marker=" + url.QueryEscape(`{"uuid":"`+middle+`"}`)
	b.ResetTimer()
	for range b.N {
		w := httptest.NewRecorder()
		h.ServeHTTP(w, httptest.NewRequest("GET", path, nil))
		if w.Code != 200 {
			b.Fatal(w.Code)
		}
	}
}
