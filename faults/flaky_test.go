package faults

import (
	"io"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync/atomic"
)

// flakyCloud is the cloud's HTTP API with faults that can be turned on:
// while permille is above zero, that share of requests (the changefeed's
// websocket excepted: changefeed-cut cuts it) fails, half of them with
// the 503 and body restify sends for an unavailable service, half cut
// off half-way through the body (the whole length announced, the
// connection then dropped), as a proxy restarting under load would.
type flakyCloud struct {
	next     http.Handler
	permille atomic.Int32
	refused  atomic.Int64 // requests answered 503
	cut      atomic.Int64 // requests cut off
}

func (f *flakyCloud) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	p := int(f.permille.Load())
	if p == 0 || strings.EqualFold(r.Header.Get("Upgrade"), "websocket") || rand.IntN(1000) >= p {
		f.next.ServeHTTP(w, r)
		return
	}
	if rand.IntN(2) == 0 {
		f.refused.Add(1)
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusServiceUnavailable)
		_, _ = io.WriteString(w, `{"code":"ServiceUnavailableError","message":"service unavailable"}`)
		return
	}
	f.cut.Add(1)
	rec := httptest.NewRecorder()
	f.next.ServeHTTP(rec, r)
	body := rec.Body.Bytes()
	for k, v := range rec.Header() {
		w.Header()[k] = v
	}
	w.Header().Set("Content-Length", strconv.Itoa(len(body)))
	w.WriteHeader(rec.Code)
	_, _ = w.Write(body[:len(body)/2])
	if fl, ok := w.(http.Flusher); ok {
		fl.Flush()
	}
	panic(http.ErrAbortHandler) // the server drops the connection
}
