package api

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/cnsd/cnsd/schema"
	"github.com/cnsd/cnsd/store"
)

// FuzzRequests sends arbitrary methods, paths and bodies to every route:
// the API never panics, answers with a known status, and every error is a
// JSON body with a message naming what was wrong.
func FuzzRequests(f *testing.F) {
	for _, seed := range []struct{ method, path, body string }{
		{"POST", "/suffixes-for-vm", `{"owner_uuid": "o", "networks": ["n"]}`},
		{"POST", "/suffixes-for-vm", `{"owner_uuid": 1}`},
		{"POST", "/suffixes-for-vm", `[`},
		{"GET", "/vm/" + vmUUID, ""},
		{"GET", "/vm/%zz", ""},
		{"GET", "/peer/[::1]:53", ""},
		{"DELETE", "/peer/192.0.2.1", ""},
		{"POST", "/held-deletions/re-list/confirm", ""},
		{"GET", "/zones", ""},
	} {
		f.Add(seed.method, seed.path, seed.body)
	}
	st, err := store.Open(context.Background(), store.NewMemory(), store.Options{}, nil)
	if err != nil {
		f.Fatal(err)
	}
	srv := New(st, noDNS{}, Access{Mode: schema.AuthNone}, nil)
	srv.SetCloud(&fakeCloud{})
	known := map[int]bool{200: true, 400: true, 401: true, 404: true, 405: true, 409: true, 413: true, 503: true}
	f.Fuzz(func(t *testing.T, method, path, body string) {
		if method == "" || strings.ContainsAny(method, " \t\r\n()<>@,;:\\\"/[]?={}") || !strings.HasPrefix(path, "/") {
			return // not an HTTP request line the server would be handed
		}
		req, err := http.NewRequest(method, "http://cnsd"+path, strings.NewReader(body))
		if err != nil {
			return
		}
		w := httptest.NewRecorder()
		srv.ServeHTTP(w, req)
		if !known[w.Code] && w.Code != 301 && w.Code != 307 && w.Code != 308 {
			t.Fatalf("%s %q: status %d", method, path, w.Code)
		}
		if w.Code >= 400 {
			var e Error
			if err := json.Unmarshal(w.Body.Bytes(), &e); err != nil || e.Message == "" {
				t.Fatalf("%s %q: status %d with body %q, want a JSON error", method, path, w.Code, w.Body.String())
			}
		}
	})
}
