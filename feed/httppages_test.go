package feed

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/cnsd/cnsd/mockcloud"
)

// pagedAPI serves n numbered items as CNAPI and NAPI do (limit, offset),
// or, with ignoreOffset, the first page whatever the offset.
func pagedAPI(t *testing.T, n int, ignoreOffset bool, requests *[]string) string {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		*requests = append(*requests, r.URL.RequestURI())
		limit, _ := strconv.Atoi(r.URL.Query().Get("limit"))
		offset, _ := strconv.Atoi(r.URL.Query().Get("offset"))
		if ignoreOffset {
			offset = 0
		}
		items := []int{}
		for i := offset; i < n && i < offset+limit; i++ {
			items = append(items, i)
		}
		_ = json.NewEncoder(w).Encode(items)
	}))
	t.Cleanup(srv.Close)
	return srv.URL
}

func TestGetAllPages(t *testing.T) {
	tests := []struct {
		items, requests int
		path            string
		ignoreOffset    bool
		wantErr         string
	}{
		{0, 1, "/things", false, ""},
		{999, 1, "/things", false, ""},
		{1000, 2, "/things", false, ""},
		{2345, 3, "/things?setup=true", false, ""},
		{5000, maxListPages, "/things", true, "ignore offset"},
	}
	for _, tc := range tests {
		t.Run(fmt.Sprintf("%d items at %s", tc.items, tc.path), func(t *testing.T) {
			var requests []string
			r := newRESTClient(pagedAPI(t, tc.items, tc.ignoreOffset, &requests), nil)
			body, err := r.getAllPages(t.Context(), tc.path)
			if len(requests) != tc.requests {
				t.Errorf("%d requests, want %d: %v", len(requests), tc.requests, requests[:min(3, len(requests))])
			}
			if len(requests) > 1 && !strings.HasPrefix(requests[1], tc.path) || !strings.Contains(requests[len(requests)-1], "limit=1000") {
				t.Errorf("requests %v, want %s with limit and offset", requests[:min(3, len(requests))], tc.path)
			}
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("err %v, want one containing %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			var got []int
			if err := json.Unmarshal(body, &got); err != nil {
				t.Fatalf("%v: %.80s", err, body)
			}
			if len(got) != tc.items || tc.items > 0 && (got[0] != 0 || got[len(got)-1] != tc.items-1) {
				t.Errorf("got %d items, want 0..%d", len(got), tc.items-1)
			}
		})
	}
}

// TestCNAPIListsEveryPage: with more compute nodes than one page holds,
// every one is known, including those of the last page.
func TestCNAPIListsEveryPage(t *testing.T) {
	f := &mockcloud.Fixture{}
	for i := range 2345 {
		f.Servers = append(f.Servers, mockcloud.Server{UUID: fmt.Sprintf("c0000000-0000-4000-8000-%012d", i), Hostname: fmt.Sprintf("cn%d", i),
			Status: "running", Setup: true, LastBoot: "2026-02-01T08:00:00Z", LastHeartbeat: "2026-03-01T11:59:58Z"})
	}
	srv := httptest.NewServer(mockcloud.New(f, nil).Handler())
	t.Cleanup(srv.Close)
	c := NewCNAPI(CNAPIOptions{URL: srv.URL, PollInterval: time.Hour, Now: func() time.Time { return testNow }})
	changed, ok := c.poll(t.Context())
	if !ok || len(changed) != 2345 {
		t.Fatalf("poll: %d servers, ok %v; want all 2345", len(changed), ok)
	}
	if _, ok := c.Server("c0000000-0000-4000-8000-000000002344"); !ok {
		t.Error("the last page's last server is unknown")
	}
}
