package store

import (
	"bytes"
	"context"
	"log/slog"
	"slices"
	"strings"
	"testing"

	"github.com/cnsd/cnsd/zonegen"
)

func TestReverseZoneLifecycle(t *testing.T) {
	const rev = "2.0.10.in-addr.arpa."
	mem := NewMemory()
	s, _ := open(t, mem, Options{})
	p := ptr("5.2.0.10.in-addr.arpa.", "web.example.com.", "vm1")
	fwd := a("web.example.com.", "10.0.2.5", "vm1")
	commit(t, s, contrib("vm1", map[string][]Record{zone: {fwd}, rev: {p}}))
	if got := s.Zones(); !slices.Equal(got, []string{rev, zone}) {
		t.Fatalf("Zones = %v", got)
	}
	first := s.Snapshot(rev).Serial()
	watch := s.Watch()
	diffs := commit(t, s, contrib("vm1", map[string][]Record{zone: {fwd}}))
	if len(diffs) != 1 || diffs[0].Zone != rev || !slices.Equal(diffs[0].Removed, []Record{p}) || diffs[0].To != first+1 {
		t.Fatalf("final diff = %+v, want %s removing %v at %d", diffs, rev, p, first+1)
	}
	if s.Snapshot(rev) != nil || slices.Contains(s.Zones(), rev) {
		t.Errorf("%s still published after its final serial", rev)
	}
	if names, _ := mem.Zones(context.Background()); slices.Contains(names, rev) {
		t.Errorf("%s still in the backend", rev)
	}
	<-watch
	t.Run("comes back after its final serial", func(t *testing.T) {
		diffs := commit(t, s, contrib("vm1", map[string][]Record{zone: {fwd}, rev: {p}}))
		if len(diffs) != 1 || diffs[0].From != 0 || !(first + 1).Less(diffs[0].To) {
			t.Errorf("recreated diff = %+v, want from 0 to after the final serial %d", diffs, first+1)
		}
	})
}

func TestDropRetried(t *testing.T) {
	fb := &failing{Backend: NewMemory()}
	s, _ := open(t, fb, Options{})
	commit(t, s, contrib("vm1", map[string][]Record{zone: {a("a.example.com.", "10.0.0.1", "vm1")}}))
	commit(t, s, contrib("vm2", map[string][]Record{"other.": {a("a.other.", "10.0.0.2", "vm2")}}))
	// Fail only the drop: a backend that fails Drop changes.
	dropFails := &dropFailing{Backend: fb}
	s.b = dropFails
	commit(t, s, zonegen.Contribution{VM: "vm1"})
	snap := s.Snapshot(zone)
	if snap == nil || snap.Len() != 0 {
		t.Fatalf("after a failed drop the zone should stay published empty, got %v", snap)
	}
	s.b = fb
	commit(t, s, contrib("vm2", map[string][]Record{"other.": {a("b.other.", "10.0.0.2", "vm2")}}))
	if s.Snapshot(zone) != nil {
		t.Errorf("the next commit did not drop the empty zone")
	}
}

type dropFailing struct{ Backend }

func (d *dropFailing) Apply(ctx context.Context, epoch uint64, changes []ZoneChange) error {
	if changes[0].Drop {
		return errInjected
	}
	return d.Backend.Apply(ctx, epoch, changes)
}

func TestReopen(t *testing.T) {
	mem := NewMemory()
	s1, _ := open(t, mem, Options{})
	commit(t, s1, contrib("vm1", map[string][]Record{zone: {a("a.example.com.", "10.0.0.1", "vm1")}}),
		contrib("vm2", map[string][]Record{zone: {a("a.example.com.", "10.0.0.1", "vm2"), a("b.example.com.", "10.0.0.2", "vm2")}}))
	commit(t, s1, contrib("vm1", map[string][]Record{zone: {a("c.example.com.", "10.0.0.3", "vm1")}}))
	var logs bytes.Buffer
	s2, err := Open(context.Background(), &corrupt{mem}, Options{Clock: s1.opts.Clock}, slog.New(slog.NewTextHandler(&logs, nil)))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(logs.String(), "key=zone/bad") {
		t.Errorf("corrupt value not logged with its key: %s", logs.String())
	}
	if got, want := all(s2, zone), all(s1, zone); !slices.Equal(got, want) {
		t.Errorf("reopened served %v, want %v", got, want)
	}
	if s2.Snapshot(zone).Serial() != s1.Snapshot(zone).Serial() {
		t.Errorf("reopened serial differs")
	}
	d1 := commit(t, s1, zonegen.Contribution{VM: "vm2"})
	s3, _ := open(t, mem, Options{})
	if got := all(s3, zone); !slices.Equal(got, all(s1, zone)) || len(d1) != 1 {
		t.Errorf("after the commit, reopened %v, want %v", got, all(s1, zone))
	}
}

// corrupt reports one undecodable value on Load.
type corrupt struct{ *Memory }

func (c *corrupt) Load(ctx context.Context, report func(string, error)) (map[string]*ZoneData, error) {
	report("zone/bad", errInjected)
	return c.Memory.Load(ctx, report)
}
