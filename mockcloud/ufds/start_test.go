package ufds

import (
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/cnsd/cnsd/mockcloud"
)

func smallCloud() *mockcloud.Cloud {
	return mockcloud.New(mockcloud.Generate(mockcloud.GenOptions{VMs: 1, Accounts: 1, Servers: 1, Seed: 1}), nil)
}

// TestStartOnTakenPort: when another server holds the port, slapd cannot
// bind it and Start must fail saying so, not take the other server's
// answer for its own (the demo once ran its HTTP APIs and "UFDS" on one
// port, and cnsd's binds went unanswered).
func TestStartOnTakenPort(t *testing.T) {
	web := httptest.NewServer(http.NotFoundHandler())
	defer web.Close()
	first, err := Start(smallCloud(), Options{Dir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	defer first.Stop()
	for name, port := range map[string]int{
		"http":  web.Listener.Addr().(*net.TCPAddr).Port,
		"slapd": first.port,
	} {
		s, err := Start(smallCloud(), Options{Dir: t.TempDir(), Port: port})
		if err == nil {
			s.Stop()
			t.Errorf("Start on port %d, held by %s, succeeded", port, name)
			continue
		}
		if !strings.Contains(err.Error(), "slapd exited before listening") || !strings.Contains(err.Error(), "Address already in use") {
			t.Errorf("Start on port %d, held by %s: %v; want slapd's exit and its reason reported", port, name, err)
		}
	}
}

// TestAnswersAsUs: only this slapd's answer counts as ready, not a
// server that accepts the connection and answers otherwise, or not at
// all, or another slapd.
func TestAnswersAsUs(t *testing.T) {
	s, err := Start(smallCloud(), Options{Dir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Stop()
	addr := strings.TrimPrefix(s.URL, "ldap://")
	if !answersAsUs(addr, s.nonce) {
		t.Errorf("slapd at %s did not count as itself (nonce %s)", addr, s.nonce)
	}
	if answersAsUs(addr, "0123456789abcdef") {
		t.Errorf("slapd at %s counted as another slapd", addr)
	}
	web := httptest.NewServer(http.NotFoundHandler())
	defer web.Close()
	if answersAsUs(web.Listener.Addr().String(), s.nonce) {
		t.Errorf("an HTTP server at %s counted as slapd", web.Listener.Addr())
	}
	silent, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer silent.Close()
	if answersAsUs(silent.Addr().String(), s.nonce) {
		t.Errorf("a listener that never answers at %s counted as slapd", silent.Addr())
	}
}
