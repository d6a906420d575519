package ufdstest

import (
	"testing"

	"github.com/cnsd/cnsd/mockcloud"
	"github.com/cnsd/cnsd/mockcloud/ufds"
)

// The directory's names and credentials, as package ufds has them.
const (
	Password    = ufds.Password
	RootDN      = ufds.RootDN
	UsersDN     = ufds.UsersDN
	ChangelogDN = ufds.ChangelogDN
	LatestDN    = ufds.LatestDN
)

// LDAPName is the attribute name slapd stores a UFDS attribute under.
func LDAPName(ufdsName string) string { return ufds.LDAPName(ufdsName) }

// Server is a running ufds.Server tied to one test.
type Server struct {
	*ufds.Server
	t testing.TB
}

// Start runs slapd loaded with c's accounts and changelog in the test's
// temporary directory, and stops it when the test ends.
func Start(t testing.TB, c *mockcloud.Cloud) *Server {
	t.Helper()
	s, err := ufds.Start(c, ufds.Options{Dir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Stop)
	return &Server{Server: s, t: t}
}

// Restart starts a stopped slapd again on the same URL, failing the test
// if it cannot.
func (s *Server) Restart() {
	s.t.Helper()
	if err := s.Server.Restart(); err != nil {
		s.t.Fatal(err)
	}
}
