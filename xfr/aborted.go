package xfr

import (
	"maps"
	"net/netip"
	"strings"
	"sync"
)

// abortHint is what a log line about a transfer that ended early says of
// the likeliest cause with cnsd: a secondary that refuses one of the
// zone's RRsets drops the connection mid-transfer.
const abortHint = "a secondary that aborts a transfer of a zone with large RRsets may be hitting its max-records-per-type (BIND 9.18.28+, default 100); see the operator guide"

// abortCounts counts transfers that ended early, by zone.
type abortCounts struct {
	mu     sync.Mutex        // guards byZone
	byZone map[string]uint64 // zone without the trailing dot → transfers
}

// transferAborted logs at warn (at most once a minute per peer and zone)
// and counts a transfer of z to peer that ended before its last message
// was written: the connection was reset or closed, which a secondary
// that refuses the zone's data does mid-transfer.
func (s *Server) transferAborted(kind string, z servedZone, peer netip.Addr, x *stream, err error) {
	c := &s.transfers.aborted
	c.mu.Lock()
	if c.byZone == nil {
		c.byZone = map[string]uint64{}
	}
	c.byZone[strings.TrimSuffix(z.name, ".")]++
	c.mu.Unlock()
	s.warnClient(kind+" aborted|"+peer.String()+"|"+z.name, kind+" ended early", "zone", z.name, "peer", peer,
		"serial", z.serial(), "records_sent", x.sent, "messages", x.msgs, "largest_rrset", z.snap.LargestRRset(),
		"hint", abortHint, "err", err)
}

// AbortedTransfers returns how many transfers of each zone (named
// without the trailing dot) ended early since start.
func (s *Server) AbortedTransfers() map[string]uint64 {
	c := &s.transfers.aborted
	c.mu.Lock()
	defer c.mu.Unlock()
	return maps.Clone(c.byZone)
}
