// Package api serves cnsd's REST API and metrics, and defines the wire types
// that api/client and cnsadm share.
//
// The routes are those of Triton CNS (GET /ping, /zones, /vm/:uuid, /peers,
// /peer/:addr, /allowed-peers, POST /suffixes-for-vm), cnsd's own (GET
// /ready, /pending-removals, /held-deletions, POST
// /held-deletions/:cause/confirm, GET /openapi.json) and /metrics in the
// Prometheus text format. openapi.json, embedded and served at GET
// /openapi.json, is the OpenAPI 3.1 document of every route New registers:
// parameters, bodies, answers with their JSON field names, errors and the
// token each needs; docs/api.md summarises it. Its tests hold it to the
// code: the routes New registers are exactly the documented ones, and real
// answers, errors included, match its schemas.
//
// Errors are mapped to HTTP status codes in one function (fail), and every
// error, 404 and 405 included, is an Error body whose code is restify's
// name for the status, as Triton's APIs answer; so are the answers
// net/http gives itself to requests it cannot read (400, 417, 431, 501,
// 505), which Serve's listener rewrites (rawerrors.go). Every route
// answers with the shape of Triton CNS and cnsd's additions after it.
//
// GET /ping answers a Ping from memory (whether this process writes, what
// it serves, the writer's feed) without asking the store; GET /ready asks
// the store through Health.
//
// Access says which routes need a bearer token (by default all but GET
// /ping, GET /ready and GET /openapi.json); EnsureTokenFile creates the
// token cnsd uses when the configuration sets none, and ReadTokenFile
// reads it for cnsadm. Serve answers on a listener with Limits on
// timeouts, header size and connections; request bodies are limited to
// MaxBodyBytes.
//
// GET /vm/:uuid answers from the store in every process: uuid, names and
// last_visit as Triton CNS sends them, and zones, the VM's records per
// zone with the TTL the DNS server serves them with; the writing process
// adds why the VM has them (instance, services, reasons, notes, pending,
// held). cnsadm preview prints the same type for a VM it evaluates
// without a running cnsd (VM.SetRecords builds both):
//
//	{"uuid": "c43ae904-…", "names": ["web0.inst.alice.dc1.cns.example.com", …],
//	 "last_visit": 1772366400000, "instance": true,
//	 "services": [{"name": "web", "ports": [80], "listed": true}],
//	 "zones": [{"zone": "dc1.cns.example.com", "records": [
//	   {"name": "web0.inst.alice.dc1.cns.example.com", "type": "A", "value": "10.88.1.2", "ttl": 30}, …]}]}
//
// api reads from store and xfr (secondaries) and may import schema. It must not import feed,
// zonegen or hysteresis: it learns about new data only from the store.
// deptest enforces this.
package api
