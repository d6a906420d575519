// Package schema holds cnsd's embedded JSON schemas and turns a
// configuration file into a validated Config.
//
// It is a leaf: it imports the standard library and the JSON schema
// validator only, never another package of this module.
//
// # Pipeline
//
// Parse works like Prometheus's configuration loader, in this order:
//
//  1. Decoding: the file must be one JSON object with nothing after it.
//     Syntax errors give the line and column. An empty key, an object with
//     the same key twice, a number that does not fit a float64 and nesting
//     deeper than 32 levels are rejected.
//  2. Normalisation: the RFD 1 spelling is rewritten to the current one
//     (dns_zones → forward_zones; in each zone and in reverse_zones,
//     slaves → peers and hidden_master → hidden_primary). A file that sets
//     both spellings of one key is rejected.
//  3. Strict keys: a key the schema does not define is an error at every
//     level, except inside redis_opts, which is passed on as it is.
//  4. Schema: the file is validated against the embedded
//     config.schema.json (types, required keys, ranges and shapes of
//     names and addresses). Every failing value is reported, in file
//     order: a file with three mistakes names all three.
//  5. Defaults: the values are laid over the defaults (see Config).
//  6. Cross-field checks: at most one catch-all zone, hidden_primary needs
//     peers, TSIG key references resolve, no duplicate network in a zone,
//     the coalescing window does not exceed its bound, and api and
//     api_server are not both set.
//
// Every rejection is an *Error that names the field path, in the form
// forward_zones["dc1.cns.example.com"].networks[0], and the offending
// value (secrets excepted); it wraps ErrInvalid. When the schema finds
// several, the rejection is Errors, a list of them that errors.Is and
// errors.As see through. Messages use the current
// spelling of keys even when the file uses RFD 1's.
//
// # Zone names
//
// Zone names must be lower-case DNS names without a trailing dot, and not
// under in-addr.arpa or ip6.arpa (reverse zones are generated from the
// addresses seen). Zones may nest: a.example.com and b.a.example.com are
// two zones, and a query goes to the longest zone that contains it. The
// order of forward_zones in the file is kept; it breaks ties downstream.
//
// # Compatibility
//
// Every key of the shipped Triton CNS configuration is accepted, so an
// existing file loads unchanged. Keys cnsd has no use for are kept in
// Config.Legacy. Upgrade rewrites a file to the current spelling.
package schema
