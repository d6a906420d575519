// Package secondarytest starts real DNS secondaries — BIND 9 (named) and
// Knot DNS (knotd) — as child processes for integration tests of cnsd's
// transfers: each on 127.0.0.1 with a port the harness picks, in a
// temporary directory, logging to a file the test reads to tell an IXFR
// from an AXFR.
//
// A test that needs a secondary whose binary is missing is skipped, unless
// the environment sets CNSD_REQUIRE_SECONDARIES (make test does), in which
// case it fails naming the Debian package to install. CNSD_NAMED and
// CNSD_KNOTD override the binaries' paths.
//
// It imports only miekg/dns and the standard library, so any test of the
// module may use it.
package secondarytest
