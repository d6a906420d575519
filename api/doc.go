// Package api serves cnsd's REST API and metrics, and defines the wire types
// that api/client and cnsadm share.
//
// The routes are those of Triton CNS (GET /ping, /zones, /vm/:uuid, /peers,
// /peer/:addr, /allowed-peers, POST /suffixes-for-vm) plus /metrics in the
// Prometheus text format. Errors are mapped to HTTP status codes in one
// function. Served so far: /ping, /zones, /peers, GET and DELETE
// /peer/:addr and /allowed-peers, with the shapes of Triton CNS and
// cnsd's additions after them.
//
// api reads from store and xfr (secondaries) and may import schema. It must not import feed,
// zonegen or hysteresis: it learns about new data only from the store.
// deptest enforces this.
package api
