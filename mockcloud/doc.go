// Package mockcloud is a simulated Triton cloud for tests and demos: it serves
// the VMAPI (including the changefeed websocket), CNAPI and NAPI routes cnsd
// follows, from a fixture it loads or generates, and lets tests and operators
// change that cloud through Go methods, an admin HTTP API under /_mock/ and a
// random churn.
//
// Everything it sends is in the APIs' own JSON shapes and follows the wire
// facts of the reference changefeed publisher (docs/mockcloud.md, The
// changefeed), including the
// awkward ones a real client must survive: duplicate items, takeover of an
// instance by a second connection, upgrades without Sec-WebSocket-Version.
// A fixture may be a dump of a real cloud: the keys of its objects that the
// mock does not model are kept and sent as they came (Extra), tags and
// metadata hold values of any JSON type, and NAPI's own NIC table answers
// GET /nics/:mac (docs/mockcloud.md, "Fixture format").
//
// It is as strict as the services: a request whose parameters, values,
// paging or path identifier the real VMAPI, CNAPI or NAPI refuses is
// refused with that service's status and error body, logged, and listed by
// Refused, so that a test can require that its client sent nothing a real
// cloud would refuse (docs/mockcloud.md, "Validation rules").
//
// The UFDS (LDAP) half is served by package mockcloud/ufds, a real slapd:
// this package keeps the accounts and records their changes as a numbered
// changelog (UserChanges), which that one loads and mirrors.
//
// mockcloud shares no code with the rest of cnsd: it may import only the
// standard library and gorilla/websocket, so that it stays an independent
// model of the cloud and not a mirror of cnsd's own reading of it.
//
// Example, in a test:
//
//	c := mockcloud.New(mockcloud.Generate(mockcloud.GenOptions{VMs: 50, Accounts: 5, Servers: 3, Seed: 1}), nil)
//	srv := httptest.NewServer(c.Handler())
//	defer srv.Close()
//	c.SetTags(vmUUID, map[string]any{"triton.cns.services": "web:80"})
package mockcloud
