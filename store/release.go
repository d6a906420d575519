package store

import (
	"runtime/debug"
	"time"
)

// A Store that builds a large zone from nothing — a bootstrap's commit,
// the load of Open — allocates several times what it keeps: the
// contributions' records before they are normalized, the runs and keys
// of the bulk build, the diff. The Go runtime keeps the heap its
// collector's goal allowed at the last collection during that build,
// and a server that then only answers queries and transfers allocates
// too little for another collection to lower it: the process would hold
// the bootstrap's peak for as long as it runs (docs/BENCHMARKS.md,
// "Issue 18: memory per record after the bootstrap"). So after its
// first build of at least releaseAfter records the Store collects and
// gives the free memory back to the OS, once: later commits are
// small, and the heap then grows only towards a goal set by what the
// Store keeps. It is done here, not in cnsd's start-up, because the
// Store alone knows when such a build ends — at start or at a writer's
// first bootstrap, long after — and every program serving a Store (cnsd,
// the benchmarks' children) then does the same.

// releaseAfter is the fewest records a build from nothing gives memory
// back after; tests lower it.
var releaseAfter = 100_000

// releaseMemory collects, returns free memory to the OS and from then on
// keeps the collector's headroom in proportion (headroom.go); tests
// count its calls.
var releaseMemory = func() {
	debug.FreeOSMemory()
	keepHeadroom()
}

// releaseAfterBuild gives memory back after a build of built records
// from nothing, if it is the Store's first of at least releaseAfter.
// The caller must not hold s.mu: a collection of a large heap takes a
// while, and readers and the next commit need not wait for it.
func (s *Store) releaseAfterBuild(built int) {
	if built < releaseAfter || !s.released.CompareAndSwap(false, true) {
		return
	}
	start := time.Now()
	releaseMemory()
	s.log.Debug("memory of a build from nothing given back to the OS", "records", built, "took", time.Since(start))
}

// builtFromNothing counts the records of the plans whose zones were
// built again in one pass (rebuild): the size of the transient memory a
// commit allocated.
func builtFromNothing(plans []*zonePlan) int {
	n := 0
	for _, p := range plans {
		if p.rebuild() {
			n += p.adds
		}
	}
	return n
}
