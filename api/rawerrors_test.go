package api

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net"
	"net/http"
	"os"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// readAnswer reads one answer from r within 10 s.
func readAnswer(t *testing.T, c net.Conn, r *bufio.Reader) (*http.Response, []byte) {
	t.Helper()
	c.SetReadDeadline(time.Now().Add(10 * time.Second))
	resp, err := http.ReadResponse(r, nil)
	if errors.Is(err, os.ErrDeadlineExceeded) {
		t.Fatal("no answer 10 s later")
	}
	if err != nil {
		t.Fatalf("reading the answer: %v", err)
	}
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("reading the body: %v", err)
	}
	return resp, body
}

// TestRawErrors: requests net/http refuses before any handler runs are
// answered with an Error body, over a real TCP connection, which is then
// closed.
func TestRawErrors(t *testing.T) {
	lim := testLimits
	lim.MaxConns = 0 // a connection holds its place until its client closes it
	addr := serveLimited(t, lim)
	tests := []struct {
		name, send string
		status     int
		code       string
		message    string // a part of the message
	}{
		{"malformed request line", "GARBAGE\r\n\r\n", 400, "BadRequest", "malformed request"},
		{"invalid method", "G(T /ping HTTP/1.1\r\nHost: cnsd\r\n\r\n", 400, "BadRequest", "malformed request"},
		{"malformed version", "GET /ping HTTP/1.x\r\nHost: cnsd\r\n\r\n", 400, "BadRequest", "malformed request"},
		{"malformed header line", "GET /ping HTTP/1.1\r\nHost: cnsd\r\nno colon\r\n\r\n", 400, "BadRequest", "malformed request"},
		{"invalid header name", "GET /ping HTTP/1.1\r\nHost: cnsd\r\nBad(Name: x\r\n\r\n", 400, "BadRequest", ""},
		{"bad Host", "GET /ping HTTP/1.1\r\nHost: a b\r\n\r\n", 400, "BadRequest", "malformed Host header"},
		{"no Host", "GET /ping HTTP/1.1\r\n\r\n", 400, "BadRequest", "missing required Host header"},
		{"unsupported version", "GET /ping HTTP/3.0\r\nHost: cnsd\r\n\r\n", 505, "HttpVersionNotSupported", "unsupported protocol version"},
		{"unsupported transfer encoding", "POST /suffixes-for-vm HTTP/1.1\r\nHost: cnsd\r\nTransfer-Encoding: gzip\r\n\r\n",
			501, "NotImplemented", "Transfer-Encoding"},
		{"Expect other than 100-continue", "GET /ping HTTP/1.1\r\nHost: cnsd\r\nExpect: teapot\r\n\r\n",
			417, "ExpectationFailed", "Expect"},
		{"oversized header", "GET /ping HTTP/1.1\r\nHost: cnsd\r\nX-Big: " + strings.Repeat("h", 8<<10) + "\r\n\r\n",
			431, "RequestHeaderFieldsTooLarge", "exceed 1024 bytes"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := dial(t, addr)
			if _, err := io.WriteString(c, tt.send); err != nil {
				t.Fatal(err)
			}
			resp, body := readAnswer(t, c, bufio.NewReader(c))
			if resp.StatusCode != tt.status {
				t.Fatalf("status %s, want %d: %s", resp.Status, tt.status, body)
			}
			if ct := resp.Header.Get("Content-Type"); ct != "application/json" {
				t.Errorf("Content-Type %q, want application/json", ct)
			}
			if cl := resp.Header.Get("Content-Length"); cl != strconv.Itoa(len(body)) {
				t.Errorf("Content-Length %q for a body of %d bytes", cl, len(body))
			}
			if !resp.Close {
				t.Error("no Connection: close")
			}
			errorCode(tt.code)(t, body)
			if !strings.Contains(string(body), tt.message) {
				t.Errorf("body %s, want a message with %q", body, tt.message)
			}
			if !closedBy(t, c, 10*time.Second) {
				t.Fatal("the connection is still open 10 s later")
			}
		})
	}
}

// TestRawErrorAfterKeepAlive: on a keep-alive connection, the answers
// of handlers pass unchanged (request targets that are not paths
// included) and a malformed request after them is answered with an
// Error body.
func TestRawErrorAfterKeepAlive(t *testing.T) {
	addr := serveLimited(t, testLimits)
	c := dial(t, addr)
	r := bufio.NewReader(c)
	steps := []struct {
		send   string
		status int
		code   string
	}{
		{"GET /ping HTTP/1.1\r\nHost: cnsd\r\n\r\n", 200, ""},
		{"GET /nothing HTTP/1.1\r\nHost: cnsd\r\n\r\n", 404, "ResourceNotFound"},
		{"GET * HTTP/1.1\r\nHost: cnsd\r\n\r\n", 400, "BadRequest"},           // the mux: an empty 400
		{"CONNECT cnsd:80 HTTP/1.1\r\nHost: cnsd\r\n\r\n", 400, "BadRequest"}, // the mux: a plain 404
		{"GET /ping HTTP/1.1\r\nHost: cnsd\r\n\r\n", 200, ""},
		{"GET /ping HTTP/9.9\r\nHost: cnsd\r\n\r\n", 505, "HttpVersionNotSupported"},
	}
	for i, st := range steps {
		if _, err := io.WriteString(c, st.send); err != nil {
			t.Fatal(err)
		}
		resp, body := readAnswer(t, c, r)
		if resp.StatusCode != st.status {
			t.Fatalf("request %d: status %s, want %d: %s", i, resp.Status, st.status, body)
		}
		if st.code != "" {
			errorCode(st.code)(t, body)
		}
		last := i == len(steps)-1
		if resp.Close != last {
			t.Fatalf("request %d: Connection: close is %v", i, resp.Close)
		}
		// A handler's answer has net/http's Date; the rewritten one has none.
		if (resp.Header.Get("Date") != "") == last {
			t.Fatalf("request %d: Date %q", i, resp.Header.Get("Date"))
		}
	}
}

// TestHandlerAnswersUntouched: every byte a handler's answers are made of
// passes the listener unchanged, even answers that look like net/http's
// canned ones, on one keep-alive connection.
func TestHandlerAnswersUntouched(t *testing.T) {
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Date", "Sun, 01 Mar 2026 12:00:00 GMT") // the same in both servers
		switch r.URL.Path {
		case "/plain400":
			http.Error(w, "400 Bad Request", http.StatusBadRequest)
		case "/plain431":
			w.Header().Set("Content-Type", "text/plain; charset=utf-8")
			w.Header().Set("Connection", "close")
			w.WriteHeader(http.StatusRequestHeaderFieldsTooLarge)
			io.WriteString(w, "431 Request Header Fields Too Large")
		case "/big":
			io.WriteString(w, strings.Repeat("HTTP/1.1 400 Bad Request\r\n", 1000))
		default:
			w.Header().Set("Content-Type", "application/json")
			io.WriteString(w, `{"ok": true}`)
		}
	})
	requests := "GET /json HTTP/1.1\r\nHost: x\r\n\r\n" +
		"GET /plain400 HTTP/1.1\r\nHost: x\r\n\r\n" +
		"GET /big HTTP/1.1\r\nHost: x\r\n\r\n" +
		"GET /plain431 HTTP/1.1\r\nHost: x\r\n\r\n"
	raw := func(wrap func(net.Listener) net.Listener) string {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		srv := &http.Server{Handler: h}
		go srv.Serve(wrap(l))
		defer srv.Shutdown(context.Background())
		c := dial(t, l.Addr().String())
		if _, err := io.WriteString(c, requests); err != nil {
			t.Fatal(err)
		}
		c.SetReadDeadline(time.Now().Add(10 * time.Second))
		b, err := io.ReadAll(c)
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	plain := raw(func(l net.Listener) net.Listener { return l })
	wrapped := raw(func(l net.Listener) net.Listener { return jsonErrors(l, 0) })
	if wrapped != plain {
		t.Fatalf("the answers differ:\nwithout the listener:\n%q\nwith it:\n%q", plain, wrapped)
	}
	if n := strings.Count(plain, "HTTP/1.1 "); n < 4 {
		t.Fatalf("%d answers, want 4: %q", n, plain)
	}
}

// TestRestifyCode: the codes are restify's names of the statuses.
func TestRestifyCode(t *testing.T) {
	tests := map[int]string{
		400: "BadRequest",
		404: "NotFound",
		429: "TooManyRequests",
		431: "RequestHeaderFieldsTooLarge",
		501: "NotImplemented",
		505: "HttpVersionNotSupported",
	}
	for status, want := range tests {
		if got := restifyCode(status); got != want {
			t.Errorf("restifyCode(%d) = %q, want %q", status, got, want)
		}
	}
}

// BenchmarkPassThrough is the cost a normal answer pays for the check.
func BenchmarkPassThrough(b *testing.B) {
	p := []byte("HTTP/1.1 404 Not Found\r\nContent-Type: application/json\r\nDate: Sun, 01 Mar 2026 12:00:00 GMT\r\n" +
		"Content-Length: 50\r\n\r\n{\"code\":\"ResourceNotFound\",\"message\":\"not found\"}\n")
	for b.Loop() {
		if _, _, ok := rawError(p, 1024); ok {
			b.Fatal("rewritten")
		}
	}
}

// FuzzWire sends arbitrary bytes to a served API over TCP: the first
// answer, when it is an error, is an Error body, whoever wrote it.
func FuzzWire(f *testing.F) {
	for _, seed := range []string{
		"GET /ping HTTP/1.1\r\nHost: cnsd\r\n\r\n",
		"GET /nothing HTTP/1.1\r\nHost: cnsd\r\n\r\n",
		"GARBAGE\r\n\r\n",
		"GET /ping HTTP/3.0\r\nHost: cnsd\r\n\r\n",
		"GET /ping HTTP/1.1\r\nHost: a b\r\n\r\n",
		"GET /ping HTTP/1.1\r\nHost: cnsd\r\nExpect: x\r\n\r\n",
		"POST /suffixes-for-vm HTTP/1.1\r\nHost: cnsd\r\nTransfer-Encoding: gzip\r\n\r\n",
		"POST /suffixes-for-vm HTTP/1.1\r\nHost: cnsd\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n",
		"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n",
		"CONNECT cnsd:80 HTTP/1.1\r\nHost: cnsd\r\n\r\n",
		"GET /ping HTTP/1.1\r\nHost: cnsd\r\nX: " + strings.Repeat("h", 2<<10) + "\r\n\r\n",
	} {
		f.Add(seed)
	}
	lim := testLimits
	lim.MaxConns = 0 // each input its own connection, none refused
	addr := serveLimited(f, lim)
	f.Fuzz(func(t *testing.T, req string) {
		c, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		c.SetDeadline(time.Now().Add(10 * time.Second))
		io.WriteString(c, req)
		c.(*net.TCPConn).CloseWrite() // the whole request: no waiting for more
		raw, err := io.ReadAll(c)
		if err != nil && !errors.Is(err, syscall.ECONNRESET) {
			t.Fatalf("reading the answer: %v", err)
		}
		if len(raw) == 0 {
			return // an incomplete request: closed without an answer
		}
		resp, err := http.ReadResponse(bufio.NewReader(bytes.NewReader(raw)), nil)
		if err != nil {
			t.Fatalf("%q: the answer %q does not parse: %v", req, raw, err)
		}
		if resp.StatusCode < 400 || strings.HasPrefix(req, "HEAD") {
			return
		}
		body, _ := io.ReadAll(resp.Body)
		var e Error
		if err := json.Unmarshal(body, &e); err != nil || e.Code == "" || e.Message == "" ||
			resp.Header.Get("Content-Type") != "application/json" {
			t.Fatalf("%q: answered %q, want an Error body", req, raw)
		}
	})
}
