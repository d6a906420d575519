package knotbench

import (
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/miekg/dns"
)

func TestRecords(t *testing.T) {
	for _, n := range []int{1, 2, 3, 5, 6, 100, 1001} {
		seen := map[string]bool{}
		got := 0
		for r := range Records(n) {
			got++
			key := r.Name + " " + r.Data
			if seen[key] {
				t.Errorf("Records(%d): %s twice", n, key)
			}
			seen[key] = true
			if !strings.HasSuffix(r.Name, "."+Zone) || strings.ToLower(r.Name) != r.Name {
				t.Errorf("Records(%d): name %q is not lower-case in %s", n, r.Name, Zone)
			}
		}
		if got != n {
			t.Errorf("Records(%d) yielded %d records", n, got)
		}
	}
}

func TestQueriesExist(t *testing.T) {
	const n = 1000
	names := map[string]bool{}
	for r := range Records(n) {
		names[r.Name] = true
	}
	for _, q := range Queries(n, 200) {
		if exists := names[q.Name]; exists != (q.Rcode == dns.RcodeSuccess) {
			t.Errorf("query %s %s expects %s, but the name exists: %v",
				q.Name, dns.TypeToString[q.Type], dns.RcodeToString[q.Rcode], exists)
		}
	}
}

func TestProcessCPU(t *testing.T) {
	if _, err := os.Stat("/proc/self/stat"); err != nil {
		t.Skip("no /proc: the CPU times of the benchmarks need Linux")
	}
	if _, err := processCPU(os.Getpid()); err != nil {
		t.Fatal(err)
	}
}

// TestSameZone is the smoke test of the harness: on a small zone, both
// servers transfer the same records and answer every benchmark query as
// expected.
func TestSameZone(t *testing.T) {
	const n = 500
	p := setup(t, n)
	var sets [2][]string
	for i, s := range p.servers() {
		tr, err := AXFR(s.TCP, func(rr dns.RR) { sets[i] = append(sets[i], strings.ToLower(rr.String())) })
		if err != nil {
			t.Fatalf("%s: %v", s.Name, err)
		}
		if tr.Messages == 0 || tr.Bytes == 0 {
			t.Errorf("%s: transfer counted %+v", s.Name, tr)
		}
		slices.Sort(sets[i])
		sets[i] = slices.Compact(sets[i]) // the SOA comes first and last
	}
	if len(sets[0]) != n+2 { // the records, the SOA and one NS
		t.Errorf("cnsd transferred %d distinct records, want %d", len(sets[0]), n+2)
	}
	if !slices.Equal(sets[0], sets[1]) {
		t.Errorf("cnsd and Knot transfer different zones:\ncnsd: %q\nknot: %q", diff(sets[0], sets[1]), diff(sets[1], sets[0]))
	}
	for _, s := range p.servers() {
		c, err := NewQuerier(s.UDP)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		for _, q := range Queries(n, 100) {
			if err := c.Ask(q, 2*time.Second); err != nil {
				t.Errorf("%s: %v", s.Name, err)
			}
		}
	}
}

// diff returns the elements of a (sorted) missing from b (sorted).
func diff(a, b []string) []string {
	var out []string
	for _, x := range a {
		if _, found := slices.BinarySearch(b, x); !found {
			out = append(out, x)
		}
	}
	return out
}
