// Package store keeps cnsd's zones: per zone the current record set, the SOA
// serial and a bounded journal of diffs between serials, plus each VM's last
// contribution so that a VM update becomes a diff.
//
// One interface has two implementations: Redis for production and for
// several cnsd processes sharing one store, and an embedded store used when no
// Redis is configured. A commit produces one new serial for each zone it
// changes; serials never repeat or go back, across restarts. Readers (xfr, api)
// learn about new data from the store — a watch channel or an immutable
// snapshot swapped in atomically — and a transfer keeps the snapshot it
// started with.
//
// store may import zonegen (record types) and schema from this module, and
// nothing else of it. deptest enforces this.
package store
