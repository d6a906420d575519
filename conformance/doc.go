// Package conformance holds one differential test, TestConformance: it
// serves realistic zones with cnsd's DNS server (xfr.Server over a memory
// store), transfers them into Knot DNS and NSD as secondaries, sends the
// same generated queries — well-formed, odd and broken — to all three and
// fails on any field of an answer where cnsd agrees with neither Knot nor
// NSD, unless the difference is listed in testdata/allowed.txt with the
// row of docs/differences.md that gives the RFC text allowing it. It also
// checks AXFR, IXFR and NOTIFY against the same servers.
//
// The short form (a few hundred queries) runs in go test ./...; the full
// form (thousands) runs with CONFORMANCE=full (make conformance). Knot and
// NSD are started by xfr/secondarytest: without them the test is skipped,
// or fails when CNSD_REQUIRE_SECONDARIES is set (make test sets it).
//
// The package has no code outside its tests; its tests may import what
// xfr's may (the store, the schema, xfr and its test rigs).
package conformance
