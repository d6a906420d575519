package store

import (
	"iter"
	"runtime"
	"slices"
	"strings"
	"time"
)

// Snapshot is one zone at one serial. It never changes: a commit builds a
// new Snapshot that shares every name it did not touch with the old one
// (path copying), so a reader holding a Snapshot — a zone transfer, say —
// keeps seeing its serial however many commits follow. Safe for
// concurrent use.
type Snapshot struct {
	zone    string
	serial  Serial
	names   *nameTree  // name → served records
	n       int        // served records
	journal []jentry   // oldest first; the last ends at serial
	jbytes  int        // sum of the journal's entry sizes
	jdead   int        // sizes of the trimmed entries still in journal's array, before journal[0]
	sizes   rrsetSizes // RRsets of 2+ records by size; a clone copies it
	// committed is when this serial was committed (a writer) or first
	// seen (a follower); zero for a zone loaded from the backend at
	// start, whose commit time the backend does not keep.
	committed time.Time
}

// node holds the served records at one name: the union of every VM's
// records there, de-duplicated by (name, type, data) and sorted by type
// then data. recs[i].Source is the smallest UUID of the VMs that provide
// the record; the others, and the records held back, are in x, which is
// nil when every record has a single provider and no cap applies — the
// common case, which then takes a slice header and a pointer (32 bytes)
// rather than three slice headers (docs/BENCHMARKS.md, "Issue 18: the
// store's memory per record"). When one VM provides every record, recs
// is a part of that VM's own record slice (shareRecs) rather than a
// copy. Nodes are never modified once published.
type node struct {
	recs []Record
	x    *nodeExtra
}

// nodeExtra is what few nodes have besides their records.
type nodeExtra struct {
	// more[i] lists the providers of recs[i] other than its Source,
	// sorted; nil when every record has a single provider.
	more [][]string
	// held are the records of the members a name does not publish
	// (Options.MaxMembers, members.go), sorted; nil without a cap.
	held []entry
}

// moreAt returns the providers of recs[i] other than its Source.
func (n *node) moreAt(i int) []string {
	if n.x == nil || n.x.more == nil {
		return nil
	}
	return n.x.more[i]
}

// heldOf returns the records the node holds back (members.go).
func (n *node) heldOf() []entry {
	if n == nil || n.x == nil {
		return nil
	}
	return n.x.held
}

// Zone returns the zone's name (absolute, lower-case, trailing dot).
func (s *Snapshot) Zone() string { return s.zone }

// Serial returns the serial this snapshot is at.
func (s *Snapshot) Serial() Serial { return s.serial }

// Committed returns when the snapshot's serial was committed, by this
// process's clock: by the writer when it committed it, by a follower
// when it applied it. It is zero when this process loaded the zone from
// the backend as it was (at start, or after a failed commit) and has
// seen no commit of it since.
func (s *Snapshot) Committed() time.Time { return s.committed }

// Len returns the number of served records.
func (s *Snapshot) Len() int { return s.n }

// replaced keeps the record count and RRset sizes of a snapshot being
// built in step as one name's node goes from old to nn.
func (s *Snapshot) replaced(old, nn *node) {
	s.n += len(recsOf(nn)) - len(recsOf(old))
	s.sizes.moved(old, nn)
}

// Lookup returns the served records at name (absolute, lower-case, with
// the trailing dot), sorted by type then data. A record several VMs
// provide appears once, with the smallest of their UUIDs as Source. The
// slice is shared with the snapshot: callers must not modify it.
func (s *Snapshot) Lookup(name string) []Record {
	if n, ok := s.names.Get(name); ok {
		return n.recs
	}
	return nil
}

// LookupExists is Lookup, and whether name exists (owns records, or
// some name below it does: NODATA rather than NXDOMAIN) in the same
// search of the tree, where Lookup then HasDescendants search it twice.
func (s *Snapshot) LookupExists(name string) (recs []Record, exists bool) {
	n, found, next := s.names.getOrNext(name)
	if found {
		return n.recs, len(n.recs) > 0 || s.HasDescendants(name)
	}
	return nil, next != "" && isBelow(next, name)
}

// HasDescendants reports whether some name below name owns records, so
// that a query for name gets NODATA rather than NXDOMAIN. Names are kept
// in DNS canonical order, where a name's descendants directly follow it.
func (s *Snapshot) HasDescendants(name string) bool {
	it := s.names.Iterator()
	it.Seek(name)
	k, _, ok := it.Next()
	if ok && k == name {
		k, _, ok = it.Next()
	}
	return ok && isBelow(k, name)
}

// All yields every served record in canonical order: names in DNS
// canonical order (RFC 4034 §6.1: labels compared right to left), then
// type, then data. It is what AXFR sends between the SOAs.
func (s *Snapshot) All() iter.Seq[Record] {
	return func(yield func(Record) bool) {
		it := s.names.Iterator()
		for !it.Done() {
			_, n, _ := it.Next()
			for _, r := range n.recs {
				if !yield(r) {
					return
				}
			}
		}
	}
}

// Runs yields the served records of each name, in the order of All, a
// name's records at once: what a transfer sends, without a call per
// record. The slices are the snapshot's: callers must not modify them.
//
// A zone's nodes, records and strings lie on the heap in the order they
// were built, not in canonical order, so reading them one after the
// other waits for one cache miss after another (docs/BENCHMARKS.md,
// "Issue 18: AXFR at 1M records"). Before yielding a leaf's names, Runs
// reads the first and last octets of their records' names and data in a
// tight loop, whose independent loads the CPU overlaps.
func (s *Snapshot) Runs() iter.Seq[[]Record] {
	return func(yield func([]Record) bool) {
		var sum byte
		defer runtime.KeepAlive(&sum)
		for leaf := range s.names.leaves() {
			sum += readAhead(leaf)
			for _, n := range leaf {
				if !yield(n.recs) {
					return
				}
			}
		}
	}
}

// readAhead loads what yielding nodes' records will touch first, and
// returns a sum of it so that the loads are kept.
func readAhead(nodes []*node) (sum byte) {
	for _, n := range nodes {
		sum += byte(len(n.recs))
	}
	for _, n := range nodes {
		for i := range n.recs {
			r := &n.recs[i]
			if k := len(r.Name); k > 0 && i == 0 { // a node's records share it
				sum += r.Name[0] + r.Name[k-1]
			}
			if k := len(r.Data); k > 0 {
				sum += r.Data[0] + r.Data[k-1]
			}
		}
	}
	return sum
}

// Provided yields, in the order of All, the served records that source
// provides, alone or with other VMs, each with source as its Source: what
// source contributes to the zone as far as it is served. It reads the
// whole zone.
func (s *Snapshot) Provided(source string) iter.Seq[Record] {
	return func(yield func(Record) bool) {
		it := s.names.Iterator()
		for !it.Done() {
			_, n, _ := it.Next()
			for i, r := range n.recs {
				if r.Source != source && !slices.Contains(n.moreAt(i), source) {
					continue
				}
				r.Source = source
				if !yield(r) {
					return
				}
			}
		}
	}
}

// isBelow reports whether name is a proper subdomain of parent.
func isBelow(name, parent string) bool {
	if parent == "." {
		return name != "."
	}
	return len(name) > len(parent) && strings.HasSuffix(name, parent) && name[len(name)-len(parent)-1] == '.'
}

// nameOrder orders names canonically (RFC 4034 §6.1): label by label from
// the right, each label as an octet string. Names are lower-case already.
// Escaped dots inside labels are not special-cased: zonegen never emits
// them. It skips the common suffix in one backward scan rather than
// splitting labels, since lookups call it a few dozen times.
type nameOrder struct{}

func (nameOrder) Compare(a, b string) int {
	i, j := len(a), len(b)
	// Names of one zone share long suffixes (".inst.<account uuid>.<zone>"):
	// eight octets at a time is most of a lookup's work.
	for i >= 8 && j >= 8 && load64(a, i-8) == load64(b, j-8) {
		i, j = i-8, j-8
	}
	for i > 0 && j > 0 && a[i-1] == b[j-1] {
		i, j = i-1, j-1
	}
	// a[i:] == b[j:]; keep only its whole labels, so that a[:i] and b[:j]
	// end in the first labels that differ.
	if !labelStart(a, i) || !labelStart(b, j) {
		k := strings.IndexByte(a[i:], '.')
		if k < 0 {
			k = len(a) - i - 1
		}
		i, j = i+k+1, j+k+1
	}
	switch a, b = a[:i], b[:j]; {
	case a == "" && b == "":
		return 0
	case a == "":
		return -1
	case b == "":
		return 1
	}
	return strings.Compare(finalLabel(a), finalLabel(b))
}

// load64 returns the eight octets of s from i as one word.
func load64(s string, i int) uint64 {
	s = s[i : i+8]
	return uint64(s[0]) | uint64(s[1])<<8 | uint64(s[2])<<16 | uint64(s[3])<<24 |
		uint64(s[4])<<32 | uint64(s[5])<<40 | uint64(s[6])<<48 | uint64(s[7])<<56
}

func labelStart(s string, i int) bool { return i == 0 || s[i-1] == '.' }

// finalLabel returns the rightmost label of s.
func finalLabel(s string) string {
	s = strings.TrimSuffix(s, ".")
	return s[strings.LastIndexByte(s, '.')+1:]
}

// emptySnapshot returns a zone's snapshot with no records.
func emptySnapshot(zone string, serial Serial) *Snapshot {
	return &Snapshot{zone: zone, serial: serial, names: &nameTree{}, sizes: rrsetSizes{}}
}
