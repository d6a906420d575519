// Package store keeps cnsd's zones: per zone the current record set, the SOA
// serial and a bounded journal of diffs between serials, plus each VM's last
// contribution so that a VM update becomes a diff.
//
// One interface, Backend, has two implementations besides Memory, the
// in-memory reference, each in its own package beside this one and holding
// only its I/O: store/redis for production and for several cnsd processes
// sharing one store, and store/bolt, an embedded bbolt file used when no
// Redis is configured. This package owns the contract, and store/storetest
// the conformance tests every backend passes. A commit produces one new
// serial for each zone it changes; serials never repeat or go back, across
// restarts. Readers (xfr, api) learn about new data from the store — a watch
// channel or an immutable snapshot swapped in atomically — and a transfer
// keeps the snapshot it started with.
//
// store may import zonegen (record types) and schema from this module, and
// nothing else of it (deptest enforces this); its backends import it, never
// the other way round.
package store
