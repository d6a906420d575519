package conformance

import (
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// The corpus's size: each variant over UDP and TCP perVariant times,
// then plain queries up to total. CONFORMANCE=full takes the long form.
const (
	shortPerVariant, shortTotal = 2, 400
	fullPerVariant, fullTotal   = 30, 6000
)

// inFlight is how many queries are outstanding at once (each to the
// three servers at the same time).
const inFlight = 6

// TestConformance sends the corpus to cnsd, Knot and NSD serving the same
// zones and fails on every field of an answer where cnsd agrees with
// neither (allowed.txt aside), then compares AXFR,
// IXFR and NOTIFY. CONFORMANCE=full runs the long corpus;
// CONFORMANCE_SEED picks another corpus (1 by default).
func TestConformance(t *testing.T) {
	allowed, err := loadAllowed()
	if err != nil {
		t.Fatal(err)
	}
	r := startRig(t)
	t.Run("queries", func(t *testing.T) { testQueries(t, r, allowed) })
	t.Run("axfr", func(t *testing.T) { testAXFR(t, r) })
	// Last: it changes a zone.
	t.Run("ixfr-notify", func(t *testing.T) { testIXFR(t, r) })
}

func testQueries(t *testing.T, r *rig, allowed []rule) {
	per, total := shortPerVariant, shortTotal
	if os.Getenv("CONFORMANCE") == "full" {
		per, total = fullPerVariant, fullTotal
	}
	seed := uint64(1)
	if s := os.Getenv("CONFORMANCE_SEED"); s != "" {
		var err error
		if seed, err = strconv.ParseUint(s, 10, 64); err != nil {
			t.Fatalf("CONFORMANCE_SEED: %v", err)
		}
	}
	queries := corpus(seed, r.zones, per, total)
	if v := os.Getenv("CONFORMANCE_VARIANT"); v != "" {
		// To look into one class: only its queries, every field shown.
		queries = slices.DeleteFunc(queries, func(q query) bool { return q.variant != v })
		showAll = true
	}
	start := time.Now()
	diffs, errs := run(r, queries)
	t.Logf("%d queries (seed %d) to %d servers in %v", len(queries), seed, len(r.servers()), time.Since(start).Round(time.Millisecond))
	for _, err := range errs[:min(len(errs), 10)] {
		t.Error(err)
	}
	report(t, diffs, allowed)
}

// showAll prints every field of the three answers to each query that
// shows a difference (CONFORMANCE_VARIANT).
var showAll bool

// run sends every query to every server and returns the differences,
// in corpus order, and the exchanges that failed for another reason
// than the server's silence.
func run(r *rig, queries []query) ([]difference, []error) {
	servers := r.servers()
	results := make([][]difference, len(queries))
	var mu sync.Mutex
	var errs []error
	work := make(chan int)
	var wg sync.WaitGroup
	for range inFlight {
		wg.Go(func() {
			for i := range work {
				q := queries[i]
				got := make([]fields, len(servers))
				var inner sync.WaitGroup
				for j, s := range servers {
					inner.Go(func() {
						raw, err := exchange(s.addr, q.pkt, q.tcp)
						if err != nil {
							mu.Lock()
							errs = append(errs, fmt.Errorf("%s: %s: %w", s.name, q.desc, err))
							mu.Unlock()
						}
						got[j] = summarize(raw, idOf(q.pkt))
					})
				}
				inner.Wait()
				results[i] = compare(q, got[0], got[1], got[2])
				if showAll && len(results[i]) > 0 {
					mu.Lock()
					fmt.Printf("%s\n  cnsd %v\n  knot %v\n  nsd  %v\n", q.desc, got[0], got[1], got[2])
					mu.Unlock()
				}
			}
		})
	}
	for i := range queries {
		work <- i
	}
	close(work)
	wg.Wait()
	return slices.Concat(results...), errs
}

func idOf(pkt []byte) uint16 {
	if len(pkt) < 2 {
		return 0
	}
	return uint16(pkt[0])<<8 | uint16(pkt[1])
}

// report sorts the differences into allowed and unexplained ones
// and prints one line per class (variant and field) with an example,
// failing the test when any is unexplained.
func report(t *testing.T, diffs []difference, allowed []rule) {
	t.Helper()
	type class struct {
		n       int
		keys    map[string]bool
		example difference
	}
	classes := map[string]*class{}
	allowedN := map[string]int{}
	for _, d := range diffs {
		if i := slices.IndexFunc(allowed, func(r rule) bool { return r.matches(d) }); i >= 0 {
			allowedN[allowed[i].String()]++
			continue
		}
		k := d.q.variant + " " + d.field
		c := classes[k]
		if c == nil {
			c = &class{keys: map[string]bool{}, example: d}
			classes[k] = c
		}
		c.n++
		c.keys[d.key()] = true
	}
	for _, r := range allowed {
		t.Logf("allowed (%s): %d differences: %s", r.why, allowedN[r.String()], r)
	}
	if len(classes) == 0 {
		return
	}
	var b strings.Builder
	unexplained := 0
	for _, k := range slices.Sorted(mapKeys(classes)) {
		unexplained += classes[k].n
		c := classes[k]
		keys := slices.Sorted(mapKeys(c.keys))
		fmt.Fprintf(&b, "\n%s: %d differences in %d keys (%s", k, c.n, len(keys), strings.Join(keys[:min(3, len(keys))], "; "))
		if len(keys) > 3 {
			b.WriteString("; …")
		}
		e := c.example
		fmt.Fprintf(&b, ")\n    e.g. %s\n    cnsd: %s\n    knot: %s\n    nsd:  %s\n", e.q.desc, clip(e.cnsd), clip(e.knot), clip(e.nsd))
	}
	t.Errorf("%d differences in %d classes (variant field) are not allowed (%s):%s", unexplained, len(classes), allowedFile, b.String())
}

func mapKeys[V any](m map[string]V) func(func(string) bool) {
	return func(yield func(string) bool) {
		for k := range m {
			if !yield(k) {
				return
			}
		}
	}
}

// clip shortens a value for the summary, indenting its lines.
func clip(s string) string {
	if s == "" {
		s = `""`
	}
	if len(s) > 400 {
		s = s[:400] + "…"
	}
	return strings.ReplaceAll(s, "\n", "\n          ")
}
