// Package feed turns the cloud's APIs into one stream of VM views.
//
// It follows the VMAPI changefeed (websocket) and bootstraps from GET /vms on
// every (re)connect, reads accounts and their changelog from UFDS (LDAP), compute
// node status from CNAPI and networks, pools and NICs from NAPI, and combines
// them into the view of each VM that zonegen consumes: the VM, its owner, its
// compute node and its NICs resolved to networks and pools. All websocket,
// HTTP-client and LDAP code of cnsd lives here. Anything malformed from an API
// is reported with the VM or entry it came from and skipped; it never stops
// the stream.
//
// feed may import zonegen (for the view types), hysteresis and schema. It must
// not import store, xfr or api: data flows feed → zonegen → store → xfr/api,
// and readers never reach upstream. deptest enforces this.
package feed
