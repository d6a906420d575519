package store

import (
	"github.com/cnsd/cnsd/zonegen"
)

// RRset names one RRset of a zone and how many records it holds.
type RRset struct {
	Name    string // absolute, lower-case, with the trailing dot
	Type    zonegen.Type
	Records int
}

// rrsetSizes counts a zone's RRsets of more than one record by size:
// size → how many. Most RRsets hold one record and are not counted, so
// the map stays small (a few dozen sizes); a commit copies it and
// adjusts it for the names it touches, which keeps LargestRRset free
// however large the zone.
type rrsetSizes map[int]int

// moved adjusts the counts for one name's node going from old to nn
// (either may be nil).
func (m rrsetSizes) moved(old, nn *node) {
	eachRRset(recsOf(old), func(_ zonegen.Type, k int) {
		if k > 1 {
			if m[k]--; m[k] == 0 {
				delete(m, k)
			}
		}
	})
	eachRRset(recsOf(nn), func(_ zonegen.Type, k int) {
		if k > 1 {
			m[k]++
		}
	})
}

// eachRRset calls f with the type and size of each RRset of recs, which
// are sorted by type (a node's records).
func eachRRset(recs []Record, f func(zonegen.Type, int)) {
	for i := 0; i < len(recs); {
		j := i + 1
		for j < len(recs) && recs[j].Type == recs[i].Type {
			j++
		}
		f(recs[i].Type, j-i)
		i = j
	}
}

// LargestRRset returns how many records the zone's largest RRset holds
// (0 for an empty zone), at no cost. Some secondaries refuse a zone with
// a large RRset: BIND 9.18.28 and later load no RRset of more than
// max-records-per-type records (default 100).
func (s *Snapshot) LargestRRset() int {
	largest := 0
	for k := range s.sizes {
		largest = max(largest, k)
	}
	if largest == 0 && s.n > 0 {
		return 1
	}
	return largest
}

// FindLargestRRset returns the zone's largest RRset, the first in
// canonical order among equals, or the zero RRset for an empty zone. It
// reads the whole zone: milliseconds for 100,000 records
// (BenchmarkFindLargestRRset), which is why the Store calls it only when
// a zone crosses Options.RRsetWarn.
func (s *Snapshot) FindLargestRRset() RRset {
	var best RRset
	it := s.names.Iterator()
	for !it.Done() {
		name, n, _ := it.Next()
		eachRRset(n.recs, func(t zonegen.Type, k int) {
			if k > best.Records {
				best = RRset{Name: name, Type: t, Records: k}
			}
		})
	}
	return best
}

// DefaultRRsetWarn is Options.RRsetWarn's default: BIND's default
// max-records-per-type.
const DefaultRRsetWarn = 100

// checkRRsetsLocked logs, once each time it happens, that a zone's
// largest RRset has grown past Options.RRsetWarn, and at info that it is
// back within it. It runs as snapshots are published; the scan it
// reads is kept up to date by every commit (LargestRRset); only a
// crossing reads the zone to name the RRset.
func (s *Store) checkRRsetsLocked(set map[string]*Snapshot) {
	if s.opts.RRsetWarn < 0 {
		return
	}
	for zone, snap := range set {
		if snap == nil {
			delete(s.overRRset, zone)
			continue
		}
		largest := snap.LargestRRset()
		switch over := largest > s.opts.RRsetWarn; {
		case over && !s.overRRset[zone]:
			s.overRRset[zone] = true
			big := snap.FindLargestRRset()
			s.log.Warn("zone has an RRset larger than rrset_warn_records: a secondary with a per-RRset limit (BIND 9.18.28+ max-records-per-type, default 100) refuses the whole zone unless configured for it; see the operator guide",
				"zone", zone, "name", big.Name, "type", big.Type.String(), "records", big.Records,
				"limit", s.opts.RRsetWarn, "serial", uint32(snap.Serial()))
		case !over && s.overRRset[zone]:
			delete(s.overRRset, zone)
			s.log.Info("zone's largest RRset is within rrset_warn_records again",
				"zone", zone, "records", largest, "limit", s.opts.RRsetWarn)
		}
	}
}
