package store

import (
	"iter"
	"maps"
	"runtime"
	"slices"
	"strings"
	"time"

	"github.com/cnsd/cnsd/parallel"
)

// zonePlan is one zone's part of a commit, computed without touching the
// Store so that a failed Apply leaves it as it was.
type zonePlan struct {
	zone   string
	cur    *Snapshot           // nil for a new zone
	set    map[string][]Record // VM → its new records; empty: it leaves the zone
	ops    map[string][]op     // name → the VMs' record changes there
	next   *Snapshot
	change ZoneChange
	// raise, when not zero, is the serial to move to instead of the
	// NextSerial of the current one (RaiseSerial).
	raise Serial
	// deltas are the VMs' changes in the order planned, turned into ops
	// when the names are edited rather than rebuilt (rebuild).
	deltas []vmDelta
	// removes: some VM had records in the zone before; adds: how many
	// records the VMs have after.
	removes bool
	adds    int
	// room is the journal's room for the plan's diff (journalRoom),
	// asked once, before the build, so that builds in parallel need not
	// call Options.Retain: past it, the records a bootstrap adds are
	// not measured further (bulkAdded.encodedAtLeast), nor listed
	// (journalLocked).
	room int
}

// vmDelta is one VM's records in a zone going from old to nw.
type vmDelta struct {
	vm      string
	old, nw []Record
}

// op is one VM starting (add) or ceasing to provide one record.
type op struct {
	r   Record
	vm  string
	add bool
}

// newZonePlan plans the changes deltas (each VM's records going from old
// to nw, both normalized, a VM at most once) to zone, whose snapshot is
// cur (nil for a new zone).
func newZonePlan(zone string, cur *Snapshot, deltas []vmDelta) *zonePlan {
	p := &zonePlan{zone: zone, cur: cur, set: make(map[string][]Record, len(deltas)), ops: map[string][]op{}, deltas: deltas}
	for _, d := range deltas {
		p.set[d.vm] = d.nw
		p.removes = p.removes || len(d.old) > 0
		p.adds += len(d.nw)
	}
	return p
}

// rebuild reports whether the plan's names are better built again in
// one pass (bulk.go) than edited: it only adds VMs (a bootstrap, a new
// zone), and at least as many records as the zone holds.
func (p *zonePlan) rebuild() bool {
	held := 0
	if p.cur != nil {
		held = p.cur.Len()
	}
	return !p.removes && p.adds > 0 && p.adds >= held
}

// opsOf turns the plan's deltas into ops by name.
func (p *zonePlan) opsOf() {
	for _, d := range p.deltas {
		old, nw := d.old, d.nw
		i, j := 0, 0
		for i < len(old) || j < len(nw) {
			c := 0
			switch {
			case i == len(old):
				c = 1
			case j == len(nw):
				c = -1
			default:
				c = rrCompare(old[i], nw[j])
			}
			switch {
			case c < 0:
				p.ops[old[i].Name] = append(p.ops[old[i].Name], op{r: old[i], vm: d.vm})
				i++
			case c > 0:
				p.ops[nw[j].Name] = append(p.ops[nw[j].Name], op{r: nw[j], vm: d.vm, add: true})
				j++
			default:
				i, j = i+1, j+1
			}
		}
	}
}

// buildLocked computes the plan's next serial, Diff, Snapshot and
// ZoneChange. Only the touched names are copied: the new snapshot shares
// every other name with the current one.
func (s *Store) buildLocked(p *zonePlan, now time.Time) {
	p.room, _, _ = s.opts.journalRoom(p.zone)
	s.namesLocked(p, now)
	s.journalLocked(p)
}

// parallelBuild is the fewest records a commit adds from which its
// zones' names are built in parallel (buildAllLocked); tests lower it.
var parallelBuild = 100_000

// buildAllLocked builds every plan, as buildLocked. A large commit (a
// bootstrap) builds its zones' names in parallel, over up to GOMAXPROCS
// goroutines (one on one core), largest first; the journals (which ask
// Options.Retain) follow in order.
//
// In a large commit, the zones it fills (fills) get their serials and
// the VMs they set, which is all their ZoneChange needs, since they keep
// no diff; their names are left to alongside, for writeLocked to build
// while the backend writes: a bootstrap's write is mostly waiting on the
// disk or Redis, and its build is mostly one zone's on one core. alongside
// is nil when there is nothing to build that way.
func (s *Store) buildAllLocked(plans []*zonePlan, now time.Time) (alongside func()) {
	adds := 0
	for _, p := range plans {
		adds += p.adds
	}
	// A large commit is planned the same way on one core, or with one
	// zone: the zones it fills keep no diff whatever the machine (the
	// builds are then only not in parallel).
	workers := max(1, min(runtime.GOMAXPROCS(0), len(plans)))
	if adds < parallelBuild {
		for _, p := range plans {
			s.buildLocked(p, now)
		}
		return nil
	}
	var filled, rest []*zonePlan
	for _, p := range plans {
		if p.fills() {
			filled = append(filled, p)
		} else {
			rest = append(rest, p)
		}
	}
	largestFirst := func(ps []*zonePlan) []*zonePlan {
		return slices.SortedFunc(slices.Values(ps), func(a, b *zonePlan) int { return b.adds - a.adds })
	}
	queue := largestFirst(rest)
	for _, p := range queue {
		p.room, _, _ = s.opts.journalRoom(p.zone) // asked here, not by the workers
	}
	parallel.Each(len(queue), workers, func(i int) {
		s.namesLocked(queue[i], now) // reads the Store only; each plan is its own
	})
	for _, p := range rest {
		s.journalLocked(p)
	}
	if len(filled) == 0 {
		return nil
	}
	queue = largestFirst(filled)
	had := make([]map[string][]Record, len(queue)) // s.vms is not written before the plans are installed
	for i, p := range queue {
		s.startLocked(p, now)
		p.next.dropJournal()
		p.setVMs() // KeepJournal 0: the backend's journal is emptied too
		had[i] = s.vms[p.zone]
	}
	maxMembers := s.opts.MaxMembers
	return func() {
		parallel.Each(len(queue), workers, func(i int) { queue[i].buildNames(had[i], maxMembers, false) })
	}
}

// fills reports whether the plan fills its zone from nothing or nearly:
// it only adds VMs, at least smallOld times as many records as the zone
// holds. In a large commit such a zone keeps no diff in its journal: a
// secondary at the serial before it transfers the zone whole, which
// moves about the same records as the diff would (docs/dns-server.md).
func (p *zonePlan) fills() bool {
	held := 0
	if p.cur != nil {
		held = p.cur.Len()
	}
	return p.rebuild() && p.adds >= smallOld*held
}

// namesLocked computes the plan's next serial, its Snapshot's names and
// the served-set Diff. It only reads the Store.
func (s *Store) namesLocked(p *zonePlan, now time.Time) {
	s.startLocked(p, now)
	p.buildNames(s.vms[p.zone], s.opts.MaxMembers, true)
}

// startLocked makes the plan's next Snapshot, the current one's names at
// the next serial, and its ZoneChange from the current serial to that
// one, without records yet. It only reads the Store.
func (s *Store) startLocked(p *zonePlan, now time.Time) {
	next, prev := emptySnapshot(p.zone, 0), Serial(0)
	base := s.dropped[p.zone] // a zone coming back continues after its final serial
	if p.cur != nil {
		next, prev = p.cur.clone(), p.cur.serial
		base = prev
	}
	next.serial, next.committed = s.nextSerialLocked(base, now), now
	if p.raise != 0 {
		next.serial = p.raise
	}
	p.next = next
	p.change = ZoneChange{Zone: p.zone, Prev: prev, Next: next.serial, Diff: Diff{Zone: p.zone, From: prev, To: next.serial}}
}

// buildNames builds the names of the plan's next Snapshot, the VMs
// having vms before it, and the served-set Diff; measure bounds the
// encoding of a diff left unlisted, for the journal (journalLocked).
func (p *zonePlan) buildNames(vms map[string][]Record, maxMembers int, measure bool) {
	var removed, added []Record
	var later *bulkAdded
	if p.rebuild() {
		removed, added, later = p.applyRebuild(p.next, vms, maxMembers)
		if later != nil && measure {
			later.atLeast = later.encodedAtLeast(p.zone, p.room)
		}
	} else {
		p.opsOf()
		removed, added = p.applyOps(p.next, vms, maxMembers)
	}
	p.change.Diff.Removed, p.change.Diff.Added, p.change.addedLater = removed, added, later
}

// journalLocked adds the plan's Diff to its Snapshot's journal and
// completes its ZoneChange.
//
// A diff whose added records are not listed yet (ZoneChange.addedLater)
// is listed only when the journal might keep it: a bootstrap's, known
// to be larger than the journal's bound, never is, and saves sorting and
// copying every record it adds (docs/BENCHMARKS.md, "Issue 18: the
// bootstrap's commit, and both branches together").
func (s *Store) journalLocked(p *zonePlan) {
	switch a := p.change.addedLater; {
	case a != nil && a.atLeast > p.room:
		// Larger than the journal keeps, as addJournal would find.
		p.next.dropJournal()
		p.change.diffEnc = nil
	case a != nil:
		p.change.Diff.Added, p.change.addedLater = a.records(), nil
		fallthrough
	default:
		p.change.diffEnc = p.next.addJournal(p.change.Diff, &s.opts)
	}
	p.change.KeepJournal = len(p.next.journal)
	p.setVMs()
}

// setVMs completes the plan's ZoneChange with the VMs it sets and drops.
func (p *zonePlan) setVMs() {
	leaving := 0
	for _, recs := range p.set {
		if len(recs) == 0 {
			leaving++
		}
	}
	if leaving == 0 {
		// Every VM is set: the plan's own map is SetVMs (backends only
		// read it), not a copy of its 100k entries in a bootstrap.
		p.change.SetVMs = p.set
		if slices.IsSortedFunc(p.deltas, func(a, b vmDelta) int { return strings.Compare(a.vm, b.vm) }) {
			p.change.setOrder = p.deltas // a VM at most once: sorted is strictly
		}
		return
	}
	for vm, recs := range p.set {
		if len(recs) == 0 {
			p.change.DelVMs = append(p.change.DelVMs, vm)
		} else {
			if p.change.SetVMs == nil {
				p.change.SetVMs = make(map[string][]Record, len(p.set)-leaving)
			}
			p.change.SetVMs[vm] = recs
		}
	}
	slices.Sort(p.change.DelVMs)
}

// own returns vm's records in the zone after the plan, given those
// before it (vms).
func (p *zonePlan) own(vms map[string][]Record) func(vm string) []Record {
	return func(vm string) []Record {
		if recs, ok := p.set[vm]; ok {
			return recs
		}
		return vms[vm]
	}
}

// applyOps applies the plan's ops to next's names, adjusting its record
// count, and returns the served records removed and added, sorted. vms
// are the zone's VMs' records before the plan.
func (p *zonePlan) applyOps(next *Snapshot, vms map[string][]Record, maxMembers int) (removed, added []Record) {
	names := newNameMap(next.names)
	own := p.own(vms)
	for name, ops := range p.ops {
		old, _ := next.names.Get(name)
		e := editOf(old)
		for _, o := range ops {
			if o.add {
				e = e.add(o.r, o.vm)
			} else {
				e = e.remove(o.r, o.vm)
			}
		}
		nn := shareRecs(e.node(name, maxMembers), own)
		removed, added = served(recsOf(old), recsOf(nn), removed, added)
		next.replaced(old, nn)
		names.set(name, nn)
	}
	p.repoint(next.names, names)
	next.names = names.done()
	slices.SortFunc(removed, Record.Compare)
	slices.SortFunc(added, Record.Compare)
	return removed, added
}

// applyRebuild builds next's names again from the records of every VM
// in the zone, those it had (vms) and the plan's, and returns the served
// records removed and added, sorted; or instead of the records added,
// later to list them (diffBulk).
func (p *zonePlan) applyRebuild(next *Snapshot, vms map[string][]Record, maxMembers int) (removed, added []Record, later *bulkAdded) {
	// The plan only adds VMs: none of its VMs has records in vms, and
	// the two maps are read side by side rather than merged into a
	// copy of the 100k VMs a bootstrap adds beside the compute nodes.
	b := buildBulkOf(maxMembers, maps.Values(vms), p.added())
	if next.names.Len() == 0 && len(vms)+len(p.set) == 1 {
		// One source fills a new zone (CommitSource's, say): its
		// records, sorted by Record.Compare, are the diff, and a
		// copy would be a record's 56 bytes more at the build's peak.
		for _, recs := range p.set {
			added = slices.Clip(recs)
		}
	} else {
		removed, added, later = diffBulk(next.names, b)
	}
	next.n, next.sizes = 0, rrsetSizes{}
	next.fill(b)
	return removed, added, later
}

// added gives the records of each VM the plan sets, in the order of its
// deltas (the batch's).
func (p *zonePlan) added() iter.Seq[[]Record] {
	return func(yield func([]Record) bool) {
		for _, d := range p.deltas {
			if len(d.nw) > 0 && !yield(d.nw) {
				return
			}
		}
	}
}

// repoint moves the nodes that share a changed VM's old records
// (shareRecs) and that no op touched onto its new records, equal at
// those names: the old slice would otherwise stay alive, whole, for as
// long as one of them did. cur is the tree before the plan.
// The nodes are replaced together, a path copy per leaf (Replace): a
// VM's names are mostly neighbours in the tree.
func (p *zonePlan) repoint(cur *nameTree, names *nameMap) {
	if names.fresh != nil {
		return // every name was built by an op
	}
	var keys []string
	var nodes []*node
	for _, d := range p.deltas {
		if len(d.old) == 0 || len(d.nw) == 0 {
			continue // nothing shared yet, or every name has an op
		}
		for i := 0; i < len(d.nw); {
			name := d.nw[i].Name
			run, _ := recsAt(d.nw[i:], name)
			i += len(run)
			if _, touched := p.ops[name]; touched {
				continue
			}
			if old, ok := cur.Get(name); ok && aliases(old.recs, d.old) && slices.Equal(old.recs, run) {
				keys, nodes = append(keys, name), append(nodes, &node{recs: run})
			}
		}
	}
	if len(keys) > 1 {
		order := make([]int, len(keys))
		for i := range order {
			order[i] = i
		}
		slices.SortFunc(order, func(a, b int) int { return cmpName(keys[a], keys[b]) })
		sk, sn := make([]string, len(keys)), make([]*node, len(keys))
		for k, i := range order {
			sk[k], sn[k] = keys[i], nodes[i]
		}
		keys, nodes = sk, sn
	}
	if t, ok := names.t.Replace(keys, nodes); ok {
		names.t = t
		return
	}
	for i, name := range keys { // not expected: each name is in the tree
		names.set(name, nodes[i])
	}
}

func (s *Snapshot) clone() *Snapshot {
	c := *s
	c.sizes = maps.Clone(s.sizes) // the clone is changed before it is published
	return &c
}

// nameMap updates a snapshot's names: by path copying when the tree has
// names (each set copies only the path to one leaf), or, when it starts
// empty (a new zone, a follower's first diff), by collecting the names
// and building the tree in one pass at the end.
type nameMap struct {
	t     *nameTree
	fresh map[string]*node // when the tree started empty; nil: deleted
}

func newNameMap(t *nameTree) *nameMap {
	if t.Len() == 0 {
		return &nameMap{fresh: map[string]*node{}}
	}
	return &nameMap{t: t}
}

// set stores n at name; a nil n deletes the name.
func (nm *nameMap) set(name string, n *node) {
	switch {
	case nm.fresh != nil:
		nm.fresh[name] = n
	case n == nil:
		nm.t = nm.t.Delete(name)
	default:
		nm.t = nm.t.Set(name, n)
	}
}

func (nm *nameMap) done() *nameTree {
	if nm.fresh == nil {
		return nm.t
	}
	names := make([]string, 0, len(nm.fresh))
	for name, n := range nm.fresh {
		if n != nil {
			names = append(names, name)
		}
	}
	slices.SortFunc(names, cmpName)
	nodes := make([]*node, len(names))
	for i, name := range names {
		nodes[i] = nm.fresh[name]
	}
	return buildNameTree(names, nodes)
}
