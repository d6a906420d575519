// Package xfr speaks DNS on the wire: it answers queries, serves AXFR
// (RFC 5936) and IXFR (RFC 1995) from consistent per-serial snapshots, sends
// NOTIFY (RFC 1996) to secondaries and tracks the serial each of them serves.
//
// Transfers are TCP only and pass the zone's ACL before any work is done;
// every serial comparison uses RFC 1982 arithmetic. The miekg/dns server code
// of cnsd lives here and nowhere else.
//
// xfr reads zones from store and may import schema. It must not import feed,
// zonegen or hysteresis: it learns about new data only from the store.
// deptest enforces this.
package xfr
