package redis

// Key layout. Every key of one zone carries the hash tag {cnsd:z:<zone>},
// so the zone lives in one Redis Cluster slot and one script can change
// it atomically:
//
//	{cnsd:z:<zone>}:serial   string: the zone's serial, decimal
//	{cnsd:z:<zone>}:epoch    string: highest lease epoch that wrote the zone
//	{cnsd:z:<zone>}:vms      hash: VM UUID → store.EncodeVMRecords
//	{cnsd:z:<zone>}:journal  list: store.EncodeDiff values, oldest first; each
//	                         holds the serials it goes from and to; values
//	                         of 16 KiB and more are deflated (compress.go)
//	{cnsd:z:<zone>}:applied  string: id of the last change written, so that
//	                         a resent script knows it has run
//	{cnsd:z:<zone>}:floor    string: the final serial of the zone's last
//	                         drop, kept after the drop (floor.go)
//
// Global keys share the tag {cnsd}:
//
//	{cnsd}:zones  set of zone names; a zone is added before its first write
//	              and removed after its drop, so a crash can leave a listed
//	              zone without keys (skipped) but never hide one with data
//	{cnsd}:lease  "<holder id> <epoch>", with the lease TTL
//	{cnsd}:epoch  highest epoch handed out or written (INCR counter)
//	{cnsd}:floors set of zone names that have a floor key
//	{cnsd}:seen   hash: zone → the highest serial a following process
//	              serves, or saw the zone dropped at, while the store
//	              holds the zone at or below it (hints.go)
//
// Commits are announced on the pub/sub channel cnsd:commits as
// "<zone> <serial>".
const (
	redisZonesKey  = "{cnsd}:zones"
	redisLeaseKey  = "{cnsd}:lease"
	redisEpochKey  = "{cnsd}:epoch"
	redisSeenKey   = "{cnsd}:seen"
	redisCommitsCh = "cnsd:commits"
)

// redisZoneKeys are the keys of one zone, in the order the apply script
// takes them.
type redisZoneKeys struct {
	serial, epoch, vms, journal, applied string
	floor                                string // outlives the zone
}

func zoneKeys(zone string) redisZoneKeys {
	p := "{cnsd:z:" + zone + "}:"
	return redisZoneKeys{serial: p + "serial", epoch: p + "epoch", vms: p + "vms", journal: p + "journal",
		applied: p + "applied", floor: p + "floor"}
}

// list is the keys that hold the zone, which a drop deletes.
func (k redisZoneKeys) list() []string {
	return []string{k.serial, k.epoch, k.vms, k.journal, k.applied}
}

// scriptKeys is KEYS of the apply script: list, then the floor.
func (k redisZoneKeys) scriptKeys() []string {
	return append(k.list(), k.floor)
}
