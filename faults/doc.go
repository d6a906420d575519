// Package faults is cnsd's fault-injection suite. It runs the real cnsd
// binary over the simulated cloud under churn, with a real redis-server
// (append-only file on) or the embedded store, and a real BIND secondary
// that follows cnsd's catalog zone (and a Knot one of every cnsd when
// several share Redis); it injects one kind of fault per
// scenario — Redis SIGKILLed, the writer SIGKILLed, the changefeed cut,
// the secondary down, the embedded store's process SIGKILLed, a full
// disk — and ends each scenario by comparing every zone with an oracle
// (the zones a fresh cnsd computes from the cloud as it now is, and the
// same zones on the secondary) and by checking that no serial went
// backwards, on the wire or in the secondary's log.
//
// The package holds tests only. `go test ./faults` runs the short form
// that CI runs; `make faults` (FAULTS=full) repeats each fault as often as
// docs/faults.md says. The run ends with a line "faults: N passed, M
// failed".
package faults
