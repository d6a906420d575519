package store

import (
	"math/rand"
	"slices"
	"strings"
	"testing"
)

func TestSnapshotQueries(t *testing.T) {
	s, _ := open(t, NewMemory(), Options{})
	recs := []Record{
		a("example.com.", "10.0.0.1", "vm1"),
		a("a.b.example.com.", "10.0.0.2", "vm1"),
		a("z.example.com.", "10.0.0.3", "vm2"),
		a("b-c.example.com.", "10.0.0.4", "vm2"),
		a("a.b.example.com.", "10.0.0.2", "vm2"), // shared with vm1
	}
	commit(t, s, contrib("vm1", map[string][]Record{zone: recs[:2]}), contrib("vm2", map[string][]Record{zone: recs[2:]}))
	snap := s.Snapshot(zone)
	tests := []struct {
		name        string
		lookup      int // records at name
		descendants bool
	}{
		{"example.com.", 1, true},
		{"b.example.com.", 0, true}, // empty non-terminal
		{"a.b.example.com.", 1, false},
		{"c.example.com.", 0, false},
		{"b-c.example.com.", 1, false},
		{"z.example.com.", 1, false},
		{"zz.example.com.", 0, false},
		{"com.", 0, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := len(snap.Lookup(tt.name)); got != tt.lookup {
				t.Errorf("Lookup = %d records, want %d", got, tt.lookup)
			}
			if got := snap.HasDescendants(tt.name); got != tt.descendants {
				t.Errorf("HasDescendants = %v, want %v", got, tt.descendants)
			}
		})
	}
	if got := snap.Lookup("a.b.example.com."); len(got) != 1 || got[0].Source != "vm1" {
		t.Errorf("shared record = %v, want one with the smallest source vm1", got)
	}
	if snap.Len() != 4 {
		t.Errorf("Len = %d, want 4", snap.Len())
	}
	var names []string
	for r := range snap.All() {
		names = append(names, r.Name)
	}
	want := []string{"example.com.", "a.b.example.com.", "b-c.example.com.", "z.example.com."}
	if !slices.Equal(names, want) {
		t.Errorf("All order = %v, want canonical %v", names, want)
	}
}

func TestNameOrder(t *testing.T) {
	ordered := []string{".", "com.", "example.com.", "a.example.com.", "yljkjljk.a.example.com.", "z.a.example.com.",
		"zabc.a.example.com.", "z.example.com.", "\x01.z.example.com.", "*.z.example.com.", "\x80.z.example.com."}
	for i := range ordered {
		for j := range ordered {
			got := nameOrder{}.Compare(ordered[i], ordered[j])
			if want := cmpInt(i, j); got != want {
				t.Errorf("Compare(%q, %q) = %d, want %d", ordered[i], ordered[j], got, want)
			}
		}
	}
}

func cmpInt(i, j int) int {
	switch {
	case i < j:
		return -1
	case i > j:
		return 1
	}
	return 0
}

// refOrder is nameOrder written plainly: labels split and compared from
// the right.
func refOrder(a, b string) int {
	la := strings.Split(strings.TrimSuffix(a, "."), ".")
	lb := strings.Split(strings.TrimSuffix(b, "."), ".")
	if a == "." {
		la = nil
	}
	if b == "." {
		lb = nil
	}
	slices.Reverse(la)
	slices.Reverse(lb)
	return slices.Compare(la, lb)
}

func TestNameOrderMatchesReference(t *testing.T) {
	rng := rand.New(rand.NewSource(1))
	labels := []string{"a", "b", "ab", "ba", "a-b", "aa", "\x01", "z", "ex", "example"}
	name := func() string {
		n := rng.Intn(4)
		if n == 0 {
			return "."
		}
		var ls []string
		for range n {
			ls = append(ls, labels[rng.Intn(len(labels))])
		}
		return strings.Join(ls, ".") + "."
	}
	for range 20000 {
		x, y := name(), name()
		if got, want := (nameOrder{}).Compare(x, y), refOrder(x, y); got != want {
			t.Fatalf("Compare(%q, %q) = %d, want %d", x, y, got, want)
		}
	}
}

// TestSnapshotProvided: Provided finds a VM's records also where another
// VM provides the same record and the served one names the other.
func TestSnapshotProvided(t *testing.T) {
	s, _ := open(t, NewMemory(), Options{})
	shared := a("a.b.example.com.", "10.0.0.2", "vm1")
	commit(t, s, contrib("vm1", map[string][]Record{zone: {a("example.com.", "10.0.0.1", "vm1"), shared}}),
		contrib("vm2", map[string][]Record{zone: {a("z.example.com.", "10.0.0.3", "vm2"), a("a.b.example.com.", "10.0.0.2", "vm2")}}),
		contrib("vm3", map[string][]Record{zone: {a("a.b.example.com.", "10.0.0.2", "vm3")}}))
	tests := []struct {
		source string
		want   []string
	}{
		{"vm1", []string{"example.com.", "a.b.example.com."}},
		{"vm2", []string{"a.b.example.com.", "z.example.com."}},
		{"vm3", []string{"a.b.example.com."}},
		{"vm4", nil},
	}
	for _, tt := range tests {
		t.Run(tt.source, func(t *testing.T) {
			var names []string
			for r := range s.Snapshot(zone).Provided(tt.source) {
				if r.Source != tt.source {
					t.Errorf("record %v has source %s, want %s", r, r.Source, tt.source)
				}
				names = append(names, r.Name)
			}
			if !slices.Equal(names, tt.want) {
				t.Errorf("Provided(%s) = %v, want %v", tt.source, names, tt.want)
			}
			c := s.Contribution(tt.source)
			if got := len(c.Records(zone)); got != len(tt.want) {
				t.Errorf("Contribution(%s) has %d records, Provided %d", tt.source, got, len(tt.want))
			}
		})
	}
}
