// Package ufdstest runs the simulated cloud's UFDS (package
// mockcloud/ufds: a real slapd serving a mockcloud.Cloud's accounts and
// changelog) for one test: in the test's temporary directory, stopped when
// the test ends, failing the test when slapd cannot start (it is never
// skipped: install the Debian packages slapd and ldap-utils).
//
// Example, in a test:
//
//	c := mockcloud.New(mockcloud.Generate(mockcloud.GenOptions{VMs: 4, Accounts: 4, Servers: 1, Seed: 1}), nil)
//	s := ufdstest.Start(t, c) // stopped when the test ends
//	c.UpdateUser(uuid, mockcloud.UserPatch{TritonCNSEnabled: &off})
//	if err := s.Sync(c); err != nil {
//		t.Fatal(err)
//	}
//	s.Stop() // an outage; s.Restart() ends it, on the same URL
package ufdstest
