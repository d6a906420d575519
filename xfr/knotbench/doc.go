// Package knotbench measures cnsd's DNS server against Knot DNS serving
// the same zone from a zone file: AXFR of large zones (wall time,
// messages, octets, server CPU time, memory per record served), also
// against NSD when it is installed; IXFR for a client 100 serials
// behind (Knot changed through knotc, its journal serving the
// changesets); and UDP queries (server CPU time per query, queries per
// second), with the ratios cnsd/Knot (and cnsd/NSD); and, with
// dnsperf (Debian package dnsperf), cnsd against Knot and NSD under load
// over UDP and TCP (BenchmarkDNSPerf: top rate, CPU per query, queries
// lost at a fixed rate).
//
// Both servers run as child processes, so the CPU time read from
// /proc/<pid>/stat is the server's alone, not the client's: cnsd is this
// test binary started again (ChildMain) with xfr.Server over a memory
// store; Knot is knotd with a zone file written from the same records
// and the SOA and NS records cnsd serves. The measurements are in the
// package's benchmarks, which run only with -bench:
//
//	go test ./xfr/knotbench -run '^$' -bench AXFR -benchtime 5x
//	go test ./xfr/knotbench -run '^$' -bench IXFR -benchtime 300x -knotbench.records 100000
//	go test ./xfr/knotbench -run '^$' -bench Query -benchtime 200000x
//	go test ./xfr/knotbench -run '^$' -bench DNSPerf -benchtime 1x -v -knotbench.records 100000
//
// -knotbench.records picks the zone sizes (100000,1000000 by default;
// 10000 under -short); -knotbench.dnsperf-transports udp loads UDP alone,
// to compare two versions in half the time. Without knotd the benchmarks and tests are
// skipped, or fail when CNSD_REQUIRE_SECONDARIES is set; CNSD_KNOTD
// names another knotd; CNSD_KNOTBENCH_CPUPROFILE=file makes the cnsd
// child write a CPU profile. It needs Linux (/proc). Do not measure under
// -race: the cnsd child would run with the race detector too.
//
// The package may import what xfr may: the store and the schema, not
// feed, zonegen or hysteresis.
package knotbench
