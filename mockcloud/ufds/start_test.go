package ufds

import (
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/cnsd/cnsd/mockcloud"
)

// TestStartOnTakenPort: when another server holds the port, slapd cannot
// bind it and Start must fail saying so, not take the other server's
// accepted connection for slapd being ready (the demo once ran its HTTP
// API and "UFDS" on one port, and cnsd's binds got HTTP 400s).
func TestStartOnTakenPort(t *testing.T) {
	web := httptest.NewServer(http.NotFoundHandler())
	defer web.Close()
	port := web.Listener.Addr().(*net.TCPAddr).Port
	c := mockcloud.New(mockcloud.Generate(mockcloud.GenOptions{VMs: 1, Accounts: 1, Servers: 1, Seed: 1}), nil)
	s, err := Start(c, Options{Dir: t.TempDir(), Port: port})
	if err == nil {
		s.Stop()
		t.Fatalf("Start on port %d, held by an HTTP server, succeeded", port)
	}
	if !strings.Contains(err.Error(), "slapd exited before listening") {
		t.Errorf("Start on a taken port: %v; want slapd's exit reported", err)
	}
}

func TestIsBindSuccess(t *testing.T) {
	for _, tc := range []struct {
		name  string
		reply []byte
		want  bool
	}{
		{"success", []byte{0x30, 0x0c, 0x02, 0x01, 0x01, 0x61, 0x07, 0x0a, 0x01, 0x00, 0x04, 0x00, 0x04, 0x00}, true},
		{"long-form length", []byte{0x30, 0x81, 0x0c, 0x02, 0x01, 0x01, 0x61, 0x07, 0x0a, 0x01, 0x00, 0x04, 0x00, 0x04, 0x00}, true},
		{"invalid credentials", []byte{0x30, 0x0c, 0x02, 0x01, 0x01, 0x61, 0x07, 0x0a, 0x01, 0x31, 0x04, 0x00, 0x04, 0x00}, false},
		{"other message id", []byte{0x30, 0x0c, 0x02, 0x01, 0x02, 0x61, 0x07, 0x0a, 0x01, 0x00, 0x04, 0x00, 0x04, 0x00}, false},
		{"not a bind response", []byte{0x30, 0x0c, 0x02, 0x01, 0x01, 0x65, 0x07, 0x0a, 0x01, 0x00, 0x04, 0x00, 0x04, 0x00}, false},
		{"truncated", []byte{0x30, 0x0c, 0x02, 0x01, 0x01, 0x61}, false},
		{"http", []byte("HTTP/1.1 400 Bad Request\r\n"), false},
		{"empty", nil, false},
	} {
		if got := isBindSuccess(tc.reply); got != tc.want {
			t.Errorf("%s: isBindSuccess(% x) = %v, want %v", tc.name, tc.reply, got, tc.want)
		}
	}
}

// TestAnswersLDAP: only slapd's answer to a bind counts as ready, not a
// server that accepts the connection and answers otherwise or not at all.
func TestAnswersLDAP(t *testing.T) {
	web := httptest.NewServer(http.NotFoundHandler())
	defer web.Close()
	if answersLDAP(web.Listener.Addr().String()) {
		t.Errorf("an HTTP server at %s counted as LDAP", web.Listener.Addr())
	}
	silent, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer silent.Close()
	if answersLDAP(silent.Addr().String()) {
		t.Errorf("a listener that never answers at %s counted as LDAP", silent.Addr())
	}
	c := mockcloud.New(mockcloud.Generate(mockcloud.GenOptions{VMs: 1, Accounts: 1, Servers: 1, Seed: 1}), nil)
	s, err := Start(c, Options{Dir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Stop()
	if addr := strings.TrimPrefix(s.URL, "ldap://"); !answersLDAP(addr) {
		t.Errorf("slapd at %s did not count as LDAP", addr)
	}
}
