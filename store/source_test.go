package store

import (
	"context"
	"testing"
)

func TestCommitSource(t *testing.T) {
	ctx := context.Background()
	s, err := Open(ctx, NewMemory(), Options{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	a := Record{Name: "a.z.example.", Type: 1, Data: "192.0.2.1"}
	b := Record{Name: "b.z.example.", Type: 1, Data: "192.0.2.2"}
	if _, err := s.CommitSource(ctx, "test", map[string][]Record{"z.example.": {a, b}}); err != nil {
		t.Fatal(err)
	}
	snap := s.Snapshot("z.example.")
	if snap == nil || snap.Len() != 2 || snap.Lookup("a.z.example.")[0].Source != "test" {
		t.Fatalf("after the first commit: %+v", snap)
	}
	first := snap.Serial()
	diffs, err := s.CommitSource(ctx, "test", map[string][]Record{"z.example.": {b}})
	if err != nil {
		t.Fatal(err)
	}
	if len(diffs) != 1 || len(diffs[0].Removed) != 1 || diffs[0].Removed[0].Name != "a.z.example." || len(diffs[0].Added) != 0 {
		t.Fatalf("second commit diffs = %+v, want a.z.example. removed only", diffs)
	}
	if snap := s.Snapshot("z.example."); !first.Less(snap.Serial()) || snap.Len() != 1 {
		t.Fatalf("after the second commit: serial %d (was %d), %d records", snap.Serial(), first, snap.Len())
	}
	if _, err := s.CommitSource(ctx, "test", nil); err != nil {
		t.Fatal(err)
	}
	if snap := s.Snapshot("z.example."); snap != nil {
		t.Fatalf("zone left with no records is still served at %d", snap.Serial())
	}
}
