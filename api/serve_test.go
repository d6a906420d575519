package api

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/cnsd/cnsd/schema"
	"github.com/cnsd/cnsd/store"
)

// testLimits are small enough for tests to pass them.
var testLimits = Limits{
	ReadHeaderTimeout: 100 * time.Millisecond,
	ReadTimeout:       300 * time.Millisecond,
	WriteTimeout:      5 * time.Second,
	IdleTimeout:       300 * time.Millisecond,
	MaxHeaderBytes:    1 << 10,
	MaxConns:          2,
}

// serveLimited serves an open API (with a cloud) under lim on loopback
// until the test ends and returns its address.
func serveLimited(t testing.TB, lim Limits) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s := New(nil, noDNS{}, Access{Mode: schema.AuthNone}, nil)
	s.SetCloud(&fakeCloud{})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- s.Serve(ctx, l, lim) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("Serve: %v", err)
		}
	})
	return l.Addr().String()
}

// closedBy reports whether the server closes c (after any answer)
// before the deadline; a connection still open then would be held as
// long as the client liked.
func closedBy(t *testing.T, c net.Conn, deadline time.Duration) bool {
	t.Helper()
	c.SetReadDeadline(time.Now().Add(deadline))
	_, err := io.Copy(io.Discard, c)
	if errors.Is(err, os.ErrDeadlineExceeded) {
		return false
	}
	return true // EOF (io.Copy returns nil) or a reset
}

func dial(t *testing.T, addr string) net.Conn {
	t.Helper()
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// TestSlowClientsAreClosed: a client that sends its headers or its body
// slowly, or keeps a connection idle, loses it after the timeout.
func TestSlowClientsAreClosed(t *testing.T) {
	addr := serveLimited(t, testLimits)
	tests := []struct {
		name, send string
		thenRead   bool // read the answer to a whole request first
	}{
		{"slow header", "GET /ping HTTP/1.1\r\nHost: cnsd\r\nX-Slow: ", false},
		{"slow body", "POST /suffixes-for-vm HTTP/1.1\r\nHost: cnsd\r\nContent-Type: application/json\r\n" +
			"Content-Length: 100\r\n\r\n{\"owner_uuid\": ", false},
		{"idle keep-alive", "GET /ping HTTP/1.1\r\nHost: cnsd\r\n\r\n", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := dial(t, addr)
			if _, err := io.WriteString(c, tt.send); err != nil {
				t.Fatal(err)
			}
			if tt.thenRead {
				resp, err := http.ReadResponse(bufio.NewReader(c), nil)
				if err != nil || resp.StatusCode != 200 {
					t.Fatalf("GET /ping: %v %v", resp, err)
				}
			}
			if !closedBy(t, c, 10*time.Second) {
				t.Fatal("the connection is still open 10 s later")
			}
		})
	}
}

// TestOversizedRequests: bodies over MaxBodyBytes are answered 413
// PayloadTooLarge, whether their length is announced or not.
func TestOversizedRequests(t *testing.T) {
	addr := serveLimited(t, testLimits)
	big := strings.Repeat("x", MaxBodyBytes+1)
	tests := []struct {
		name    string
		req     func() *http.Request
		status  int
		code    string
		chunked bool
	}{
		{name: "announced body", req: func() *http.Request {
			r, _ := http.NewRequest("POST", "http://"+addr+"/suffixes-for-vm", strings.NewReader(big))
			return r
		}, status: 413, code: "PayloadTooLarge"},
		{name: "chunked body", req: func() *http.Request {
			r, _ := http.NewRequest("POST", "http://"+addr+"/suffixes-for-vm",
				io.MultiReader(strings.NewReader(`{"owner_uuid": "`+big), strings.NewReader(`"}`)))
			return r
		}, status: 413, code: "PayloadTooLarge"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			status, body := do(t, tt.req())
			if status != tt.status {
				t.Fatalf("status %d, want %d: %.200s", status, tt.status, body)
			}
			if tt.code != "" {
				errorCode(tt.code)(t, body)
			}
		})
	}
}

// TestConnectionCap: connections over the cap are answered 429
// TooManyRequests and closed; a connection closed frees its place.
func TestConnectionCap(t *testing.T) {
	lim := testLimits
	lim.IdleTimeout = time.Minute // the held connections stay
	addr := serveLimited(t, lim)
	ping := func(c net.Conn) *http.Response {
		t.Helper()
		if _, err := io.WriteString(c, "GET /ping HTTP/1.1\r\nHost: cnsd\r\n\r\n"); err != nil {
			t.Fatal(err)
		}
		resp, err := http.ReadResponse(bufio.NewReader(c), nil)
		if err != nil {
			t.Fatal(err)
		}
		return resp
	}
	var held []net.Conn
	for range lim.MaxConns {
		c := dial(t, addr)
		if resp := ping(c); resp.StatusCode != 200 {
			t.Fatalf("connection within the cap: %s", resp.Status)
		}
		held = append(held, c)
	}
	over := dial(t, addr)
	resp := ping(over)
	body, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusTooManyRequests || resp.Header.Get("Retry-After") == "" {
		t.Fatalf("connection over the cap: %s %s, want 429 with Retry-After", resp.Status, body)
	}
	errorCode("TooManyRequests")(t, body)
	if !closedBy(t, over, 10*time.Second) {
		t.Fatal("the refused connection is still open")
	}
	held[0].Close()
	deadline := time.Now().Add(10 * time.Second)
	for {
		c := dial(t, addr)
		if ping(c).StatusCode == 200 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("a closed connection never freed its place")
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// panicZones fails every call, as a bug in a handler would.
type panicZones struct{}

func (panicZones) Zones() []string                 { panic("bug") }
func (panicZones) Snapshot(string) *store.Snapshot { panic("bug") }

// TestErrorBodies: every error the API itself answers is an Error body
// with restify's code for the status.
func TestErrorBodies(t *testing.T) {
	s := New(panicZones{}, noDNS{}, Access{Mode: schema.AuthToken, Token: "t"}, nil)
	srv := httptest.NewServer(s)
	t.Cleanup(srv.Close)
	tests := []struct {
		method, path, auth string
		status             int
		code               string
	}{
		{"GET", "/nothing", "", 404, "ResourceNotFound"},
		{"GET", "/zones", "", 401, "Unauthorized"},
		{"PATCH", "/zones", "", 405, "MethodNotAllowed"},
		{"GET", "/peer/x", "Bearer t", 400, "BadRequest"},
		{"GET", "/zones", "Bearer t", 500, "InternalError"},
		{"GET", "/held-deletions", "Bearer t", 503, "ServiceUnavailable"},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprint(tt.status), func(t *testing.T) {
			status, body := call(t, tt.method, srv.URL+tt.path, tt.auth)
			if status != tt.status {
				t.Fatalf("status %d, want %d: %s", status, tt.status, body)
			}
			errorCode(tt.code)(t, body)
		})
	}
}
