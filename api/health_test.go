package api

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"reflect"
	"testing"

	"github.com/cnsd/cnsd/schema"
)

// fakeHealth reports fixed reasons.
type fakeHealth struct{ reasons []string }

func (f fakeHealth) NotReady(context.Context) []string { return f.reasons }
func (f fakeHealth) Store(context.Context) StoreStatus { return StoreStatus{Up: len(f.reasons) == 0} }
func (f fakeHealth) Writer() bool                      { return false }

// TestReady: GET /ready answers 200 when nothing is wrong (or no Health
// is set), 503 with the reasons otherwise, without the token probes do
// not have.
func TestReady(t *testing.T) {
	for _, tc := range []struct {
		name   string
		health Health
		status int
		body   Ready
	}{
		{"no health set", nil, http.StatusOK, Ready{Ready: true}},
		{"ready", fakeHealth{}, http.StatusOK, Ready{Ready: true}},
		{"redis down", fakeHealth{reasons: []string{"redis is unreachable"}}, http.StatusServiceUnavailable,
			Ready{Reasons: []string{"redis is unreachable"}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := New(nil, nil, Access{Mode: schema.AuthToken, Token: "secret"}, nil)
			if tc.health != nil {
				s.SetHealth(tc.health)
			}
			w := httptest.NewRecorder()
			s.ServeHTTP(w, httptest.NewRequest("GET", "/ready", nil))
			var got Ready
			if err := json.Unmarshal(w.Body.Bytes(), &got); err != nil {
				t.Fatalf("body %q: %v", w.Body, err)
			}
			if w.Code != tc.status || !reflect.DeepEqual(got, tc.body) {
				t.Fatalf("GET /ready = %d %+v, want %d %+v", w.Code, got, tc.status, tc.body)
			}
		})
	}
}
