// Package secondarytest starts real DNS secondaries — BIND 9 (named), Knot
// DNS (knotd), NSD and PowerDNS (pdns_server) — as child processes for integration tests of cnsd's
// transfers: each on 127.0.0.1 with a port the harness picks, in a
// temporary directory, logging to a file the test reads to tell an IXFR
// from an AXFR.
//
// A test binds its primary first, starts the secondary with the
// primary's address, then configures the primary with the secondary's
// address (to send it NOTIFY):
//
//	s := secondarytest.StartBIND(t, secondarytest.Config{
//		Primary: primaryAddr, // a netip.AddrPort on 127.0.0.1
//		Zones:   []string{"example.test"},
//	})
//	// ... commit a change, which the primary announces by NOTIFY ...
//	s.WaitSerial(t, "example.test", serial, 30*time.Second)
//	r := s.Query(t, "www.example.test", "A")
//	kinds := s.Transfers("example.test") // AXFR first, IXFR after
//
// StartFrom runs BIND, Knot or NSD with a configuration the test writes
// whole instead — an operator's file with its addresses and directories
// replaced — given the directory, address and id.server the harness
// needs.
//
// The processes are stopped when the test ends. A test that needs a
// secondary whose binary is missing is skipped, unless the environment
// sets CNSD_REQUIRE_SECONDARIES (make test does), in which case it fails
// naming the Debian package to install. CNSD_NAMED, CNSD_KNOTD, CNSD_NSD,
// CNSD_PDNS_SERVER (and CNSD_PDNSUTIL, CNSD_SQLITE3, CNSD_PDNS_SCHEMA)
// override the programs' paths.
//
// BIND runs with -d 3: at that level it logs whether a response was
// incremental. NSD never logs that; tests ask the primary what it served
// (LogsTransferKinds). Both servers run with one worker thread; the test machine
// is small.
//
// It imports only miekg/dns and the standard library, so any test of the
// module may use it.
package secondarytest
