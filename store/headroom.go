package store

import (
	"os"
	"runtime/debug"
	"runtime/metrics"
	"sync"
	"time"
)

// After a Store's first large build has given its memory back
// (release.go), the process's heap grows again only as commits
// allocate, and Go's collector lets it grow to GOGC percent (100 by
// default) over what was live at the last collection before it collects:
// a process serving a million records, about 150 MB of them live, comes
// to hold 300 MB of heap and more after some thousands of commits, and
// keeps it (docs/BENCHMARKS.md, "Issue 18: memory in steady state"). A
// server holding a large store that changes a little at a time gains
// nothing from headroom that large; one that is busy allocating (a
// re-listing after a restart, a flood of changes) gains fewer
// collections from it, each of which marks the whole store.
//
// So from that release on, every headroomTick, the Store looks at the
// share of the process's CPU its collections took since the last tick.
// Above gcBusy the headroom doubles, back to Go's default at most; under
// gcQuiet it halves, down to a quarter of the live heap but never less
// than headroomFloor (so that a small heap keeps Go's default, where the
// headroom costs little memory), and the memory above the new goal is
// collected and given back at once: a quiet server should not wait for
// its next allocation burst to shrink.
//
// Before that release the process is starting: it lists the cloud and
// builds its zones from nothing, allocating several times what it will
// keep, and every collection marks all that the build has made so far.
// From the first Store's Open the collector is given bootGCPercent of
// headroom (bootHeadroom): a bootstrap of 100k VMs collects a quarter as
// often and takes a fifth less time, for about a tenth more peak
// memory, since the peak is the build's own and not the headroom's
// (docs/BENCHMARKS.md, "Issue 18: the collector's headroom during the
// bootstrap"). It ends at the first large build's release, which
// collects it, or at the first headroomTick in which the collector was
// quiet (a start whose store is small, or whose cloud does not answer):
// from then on the controller above runs.
//
// An operator who set GOGC in the environment keeps it: the headroom is
// then never touched. GOMEMLIMIT works as the runtime documents, on top:
// the collector runs early when the process nears it, whatever the
// headroom.

const (
	// headroomFloor is the least headroom the collector is given, in
	// bytes.
	headroomFloor = 32 << 20
	// headroomShare is the least headroom as a fraction of the live
	// heap, for heaps above four times headroomFloor.
	headroomShare = 0.25
	// headroomTick is how often the headroom is reconsidered.
	headroomTick = 10 * time.Second
	// gcBusy and gcQuiet are the shares of the process's CPU capacity
	// (GOMAXPROCS × the tick) the collector's compulsory work may take
	// before the headroom grows, and under which it shrinks.
	gcBusy  = 0.02
	gcQuiet = 0.005
	// bootGCPercent is the headroom while the process starts.
	bootGCPercent = 400
)

// gcPercentFor is the least GOGC percent a live heap of live bytes gets:
// max(headroomFloor, live×headroomShare) over live, within 25..100.
func gcPercentFor(live uint64) int {
	if live == 0 {
		return 100
	}
	room := max(float64(headroomFloor), float64(live)*headroomShare)
	p := int(100*room/float64(live) + 0.5)
	return min(max(p, int(100*headroomShare)), 100)
}

// nextGCPercent is the GOGC percent after a tick at percent, in which
// the collector took gcShare of the CPU and left live bytes live.
func nextGCPercent(percent int, gcShare float64, live uint64) int {
	least := gcPercentFor(live)
	switch {
	case gcShare > gcBusy:
		percent *= 2
	case gcShare < gcQuiet:
		percent /= 2
	}
	return min(max(percent, least), 100)
}

// headroom is the process's one controller, as the collector is one.
var headroom struct {
	mu sync.Mutex // guards all below
	// timer runs the next tick; nil when the controller is stopped.
	timer   *time.Timer
	percent int
	// boot: the process is starting (bootHeadroom) and percent is
	// bootGCPercent; booted: that happened once, and never again.
	boot, booted bool
	// gcCPU and allCPU are the compulsory collection CPU time and the
	// process's CPU capacity at the last tick, in seconds.
	gcCPU, allCPU float64
}

var headroomSamples = []metrics.Sample{
	{Name: "/gc/heap/live:bytes"},
	{Name: "/cpu/classes/gc/total:cpu-seconds"},
	{Name: "/cpu/classes/gc/mark/idle:cpu-seconds"},
	{Name: "/cpu/classes/total:cpu-seconds"},
	{Name: "/memory/classes/heap/objects:bytes"},
	{Name: "/memory/classes/heap/unused:bytes"},
	{Name: "/memory/classes/heap/free:bytes"},
}

// bootHeadroom gives the collector bootGCPercent until the start is
// over (see above), once per process, unless the environment sets GOGC
// or the controller runs already.
func bootHeadroom() {
	if _, set := os.LookupEnv("GOGC"); set {
		return
	}
	headroom.mu.Lock()
	defer headroom.mu.Unlock()
	if headroom.timer != nil || headroom.booted {
		return
	}
	headroom.boot, headroom.booted = true, true
	startHeadroomLocked(bootGCPercent)
}

// keepHeadroom starts the controller at Go's default, unless the
// environment sets GOGC or it runs already; a start's headroom
// (bootHeadroom) ends here.
func keepHeadroom() {
	if _, set := os.LookupEnv("GOGC"); set {
		return
	}
	headroom.mu.Lock()
	defer headroom.mu.Unlock()
	if headroom.timer != nil && !headroom.boot {
		return
	}
	headroom.boot = false
	startHeadroomLocked(100)
}

// startHeadroomLocked sets GOGC to percent and the controller's next
// tick a headroomTick from now.
func startHeadroomLocked(percent int) {
	headroom.percent = percent
	debug.SetGCPercent(percent)
	headroom.gcCPU, headroom.allCPU, _, _ = readHeadroomSamples()
	if headroom.timer != nil {
		headroom.timer.Reset(headroomTick)
		return
	}
	headroom.timer = time.AfterFunc(headroomTick, tickHeadroom)
}

// stopHeadroom stops the controller and puts GOGC back to 100; tests use
// it to leave the process as they found it.
func stopHeadroom() {
	headroom.mu.Lock()
	defer headroom.mu.Unlock()
	if headroom.timer != nil {
		headroom.timer.Stop()
		headroom.timer = nil
	}
	headroom.boot = false
	debug.SetGCPercent(100)
}

// StartAfresh stops the headroom controller, puts GOGC back to 100 and
// forgets that a Store was ever opened, so that the next Open gives the
// collector the start's headroom again, as in a new process. cnsd never
// calls it: a process starts once. A benchmark that bootstraps several
// times in one process calls it before each, so that every bootstrap is
// measured as a process's first and not, after the first, without the
// start's headroom (docs/BENCHMARKS.md, "Issue 18: every bootstrap of a
// benchmark as a process's first").
func StartAfresh() {
	stopHeadroom()
	headroom.mu.Lock()
	headroom.booted = false
	headroom.mu.Unlock()
}

func tickHeadroom() {
	headroom.mu.Lock()
	defer headroom.mu.Unlock()
	if headroom.timer == nil {
		return
	}
	stepHeadroomLocked()
	headroom.timer.Reset(headroomTick)
}

// stepHeadroomLocked sets GOGC for the time since the last step and,
// when it lowered it, collects what lies above the new goal and gives
// it back.
func stepHeadroomLocked() {
	gcCPU, allCPU, live, retained := readHeadroomSamples()
	share := 0.0
	if d := allCPU - headroom.allCPU; d > 0 {
		share = (gcCPU - headroom.gcCPU) / d
	}
	if headroom.boot {
		if share >= gcQuiet {
			// Still starting: keep the start's headroom.
			headroom.gcCPU, headroom.allCPU = gcCPU, allCPU
			return
		}
		headroom.boot, headroom.percent = false, 100
		debug.SetGCPercent(100)
	}
	p := nextGCPercent(headroom.percent, share, live)
	if p != headroom.percent {
		debug.SetGCPercent(p)
	}
	// The runtime's scavenger returns what lies above a lowered goal
	// only after a collection, and a quiet server may not allocate
	// enough for one: collect and return it now.
	if goal := live + live*uint64(p)/100; p < headroom.percent && retained > goal+goal/10 {
		debug.FreeOSMemory()
	}
	headroom.percent = p
	// Read again: what the collection above took is the controller's
	// own, not the process's.
	headroom.gcCPU, headroom.allCPU, _, _ = readHeadroomSamples()
}

// readHeadroomSamples returns the compulsory collection CPU time and the
// CPU capacity so far (seconds), the heap the last collection found live
// and the heap memory the process holds now, in use or free but not
// given back (bytes).
func readHeadroomSamples() (gcCPU, allCPU float64, live, retained uint64) {
	metrics.Read(headroomSamples)
	value := func(i int) metrics.Value { return headroomSamples[i].Value }
	if value(0).Kind() == metrics.KindUint64 {
		live = value(0).Uint64()
	}
	if value(1).Kind() == metrics.KindFloat64 && value(2).Kind() == metrics.KindFloat64 {
		gcCPU = value(1).Float64() - value(2).Float64()
	}
	if value(3).Kind() == metrics.KindFloat64 {
		allCPU = value(3).Float64()
	}
	for i := 4; i < len(headroomSamples); i++ {
		if value(i).Kind() == metrics.KindUint64 {
			retained += value(i).Uint64()
		}
	}
	return gcCPU, allCPU, live, retained
}
