package store

import (
	"context"
	"errors"
	"testing"
	"time"
)

func TestMemoryApply(t *testing.T) {
	ctx := context.Background()
	d := func(z string, from, to Serial) Diff { return Diff{Zone: z, From: from, To: to} }
	tests := []struct {
		name    string
		epoch   uint64
		changes []ZoneChange
		err     error
		serials map[string]Serial // after
	}{
		{"new zones", 2, []ZoneChange{{Zone: "a.", Next: 5, Diff: d("a.", 0, 5), KeepJournal: 10}, {Zone: "b.", Next: 7, Diff: d("b.", 0, 7), KeepJournal: 10}}, nil, map[string]Serial{"a.": 5, "b.": 7}},
		{"conflict applies nothing", 2, []ZoneChange{{Zone: "a.", Prev: 5, Next: 6, Diff: d("a.", 5, 6), KeepJournal: 10}, {Zone: "b.", Prev: 6, Next: 8, KeepJournal: 10}}, ErrConflict, map[string]Serial{"a.": 5, "b.": 7}},
		{"older epoch fenced", 1, []ZoneChange{{Zone: "a.", Prev: 5, Next: 6, Diff: d("a.", 5, 6), KeepJournal: 10}}, ErrFenced, map[string]Serial{"a.": 5, "b.": 7}},
		{"same epoch goes on", 2, []ZoneChange{{Zone: "a.", Prev: 5, Next: 6, Diff: d("a.", 5, 6), KeepJournal: 1}}, nil, map[string]Serial{"a.": 6, "b.": 7}},
		{"drop", 3, []ZoneChange{{Zone: "b.", Prev: 7, Next: 7, Drop: true}}, nil, map[string]Serial{"a.": 6}},
		{"epoch 2 fenced by 3", 2, []ZoneChange{{Zone: "a.", Prev: 6, Next: 7, KeepJournal: 1}}, ErrFenced, map[string]Serial{"a.": 6}},
	}
	m := NewMemory()
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if err := m.Apply(ctx, tt.epoch, tt.changes); !errors.Is(err, tt.err) || (err != nil) != (tt.err != nil) {
				t.Fatalf("Apply err = %v, want %v", err, tt.err)
			}
			zd, _ := m.Load(ctx, nil)
			got := map[string]Serial{}
			for n, z := range zd {
				got[n] = z.Serial
			}
			if len(got) != len(tt.serials) {
				t.Fatalf("zones = %v, want %v", got, tt.serials)
			}
			for n, s := range tt.serials {
				if got[n] != s {
					t.Errorf("zone %s at %d, want %d", n, got[n], s)
				}
			}
		})
	}
	zd, _ := m.Load(ctx, nil)
	if j := zd["a."].Journal; len(j) != 1 || j[0].To != 6 {
		t.Errorf("journal not trimmed to KeepJournal 1: %+v", j)
	}
	t.Run("Since", func(t *testing.T) {
		if diffs, data, err := m.Since(ctx, "a.", 6); diffs == nil || len(diffs) != 0 || data != nil || err != nil {
			t.Errorf("Since(current) = %v, %v, %v; want an empty non-nil journal", diffs, data, err)
		}
		if diffs, _, _ := m.Since(ctx, "a.", 5); len(diffs) != 1 {
			t.Errorf("Since(5) = %v, want one diff", diffs)
		}
		if _, data, _ := m.Since(ctx, "a.", 1); data == nil || data.Serial != 6 {
			t.Errorf("Since(1) = %v, want the whole zone", data)
		}
		if diffs, data, err := m.Since(ctx, "b.", 1); diffs != nil || data != nil || err != nil {
			t.Errorf("Since(dropped zone) = %v, %v, %v; want nils", diffs, data, err)
		}
	})
}

func TestMemoryLease(t *testing.T) {
	ctx := context.Background()
	m := NewMemory()
	e1, err := m.Acquire(ctx)
	if err != nil {
		t.Fatal(err)
	}
	short, cancel := context.WithTimeout(ctx, 10*time.Millisecond)
	defer cancel()
	if _, err := m.Acquire(short); err == nil {
		t.Fatal("second Acquire succeeded while the lease is held")
	}
	kept := make(chan error, 1)
	go func() { kept <- m.Keep(ctx, e1) }()
	got := make(chan uint64, 1)
	go func() {
		e2, _ := m.Acquire(ctx)
		got <- e2
	}()
	if err := m.Release(ctx, e1); err != nil {
		t.Fatal(err)
	}
	e2 := <-got
	if e2 <= e1 {
		t.Errorf("new epoch %d not above %d", e2, e1)
	}
	if err := <-kept; !errors.Is(err, ErrFenced) {
		t.Errorf("Keep after losing the lease = %v, want ErrFenced", err)
	}
	if err := m.Apply(ctx, e1, nil); !errors.Is(err, ErrFenced) {
		t.Errorf("Apply with the old epoch = %v, want ErrFenced", err)
	}
	kctx, kcancel := context.WithCancel(ctx)
	kcancel()
	if err := m.Keep(kctx, e2); err != nil {
		t.Errorf("Keep until ctx ends = %v, want nil", err)
	}
}

func TestMemoryChanged(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	m := NewMemory()
	ch := m.Changed(ctx)
	if err := m.Apply(ctx, 0, []ZoneChange{{Zone: "a.", Next: 1, KeepJournal: 1}}); err != nil {
		t.Fatal(err)
	}
	<-ch
	cancel()
	for range ch { // drains until closed
	}
}
