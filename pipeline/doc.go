// Package pipeline is the one writer of VM records: it takes what the
// cloud feeds report (VM listings and changes, compute-node and account
// changes) through the inclusion decisions, the self-removal hysteresis
// and the record generator into the store.
//
// Everything a VM's records depend on is joined here into a zonegen.View:
// the VM from VMAPI, its owner from UFDS, its compute node from CNAPI and
// its NICs' networks from NAPI. A lookup that fails leaves the VM with the
// records it last published and puts it on a retry list: a cloud API
// outage never deletes records. A complete re-list removes the VMs it no
// longer lists, and a mass-deletion guard holds any re-list or
// compute-node change that would remove more than a configured share of a
// zone's records until an operator confirms it or the condition clears.
//
// One goroutine (Run) applies every change in the order it arrived; the
// feeds hand changes over without waiting for them to be applied. The
// pages of a listing (feed.VMPageSink) are prepared in the background
// while the rest is listed, without changing anything: the listing is
// applied, as one change, only once complete (stage.go).
//
// An Evaluator runs the pipeline's own evaluation of a VM (lookups, NIC
// repair, decisions at a given time, records) over any Cloud, without a
// store or history: cnsadm preview uses it with feed.Static, so that a
// preview prints what this package would publish.
//
// pipeline imports feed, zonegen, hysteresis, store and schema; readers
// (xfr, api) never import it: they see its work through the store.
package pipeline
