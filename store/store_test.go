package store

import (
	"context"
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/cnsd/cnsd/zonegen"
)

const zone = "example.com."

func TestSharedName(t *testing.T) {
	s, _ := open(t, NewMemory(), Options{})
	web1 := a("web.example.com.", "10.0.0.1", "vm1")
	web2 := a("web.example.com.", "10.0.0.2", "vm2")
	commit(t, s, contrib("vm1", map[string][]Record{zone: {web1}}), contrib("vm2", map[string][]Record{zone: {web2}}))
	if got, want := s.Snapshot(zone).Lookup("web.example.com."), []Record{web1, web2}; !slices.Equal(got, want) {
		t.Fatalf("both VMs: Lookup = %v, want %v", got, want)
	}
	diffs := commit(t, s, zonegen.Contribution{VM: "vm1"})
	if got, want := s.Snapshot(zone).Lookup("web.example.com."), []Record{web2}; !slices.Equal(got, want) {
		t.Errorf("after deleting vm1: Lookup = %v, want %v", got, want)
	}
	if len(diffs) != 1 || !slices.Equal(diffs[0].Removed, []Record{web1}) || len(diffs[0].Added) != 0 {
		t.Errorf("diff = %+v, want removing %v only", diffs, web1)
	}
}

func TestSharedRecord(t *testing.T) {
	s, _ := open(t, NewMemory(), Options{})
	r1, r2 := a("svc.example.com.", "10.0.0.9", "vm1"), a("svc.example.com.", "10.0.0.9", "vm2")
	d := commit(t, s, contrib("vm1", map[string][]Record{zone: {r1}}), contrib("vm2", map[string][]Record{zone: {r2}}))
	if len(d) != 1 || !slices.Equal(d[0].Added, []Record{r1}) {
		t.Fatalf("first commit diff = %+v, want one added record from vm1", d)
	}
	steps := []struct {
		name        string
		vm          string
		wantServed  []Record
		wantRemoved []Record
	}{
		{"vm1 stops: vm2 still provides it", "vm1", []Record{r2}, nil},
		{"vm2 stops: it leaves the served set", "vm2", nil, []Record{r2}},
	}
	for _, st := range steps {
		t.Run(st.name, func(t *testing.T) {
			prev := s.Snapshot(zone).Serial()
			d := commit(t, s, zonegen.Contribution{VM: st.vm})
			if len(d) != 1 || !slices.Equal(d[0].Removed, st.wantRemoved) || len(d[0].Added) != 0 {
				t.Errorf("diff = %+v, want removed %v", d, st.wantRemoved)
			}
			if d[0].From != prev || !prev.Less(d[0].To) {
				t.Errorf("diff serials %d→%d, want from %d forward", d[0].From, d[0].To, prev)
			}
			if got := all(s, zone); !slices.Equal(got, st.wantServed) {
				t.Errorf("served = %v, want %v", got, st.wantServed)
			}
		})
	}
	if s.Snapshot(zone) != nil || len(s.Zones()) != 0 {
		t.Errorf("zone still there after its last record went: %v", s.Zones())
	}
}

func TestSerials(t *testing.T) {
	ts := TimeSerial(t0)
	tests := []struct {
		name  string
		clock time.Time
		want  Serial
	}{
		{"first commit takes the time serial", t0, ts},
		{"same 10 s step: prev+1", t0.Add(time.Second), ts + 1},
		{"same step again", t0.Add(2 * time.Second), ts + 2},
		{"time moves past prev+1", t0.Add(time.Minute), TimeSerial(t0.Add(time.Minute))},
		{"clock goes back an hour: prev+1", t0.Add(-time.Hour), TimeSerial(t0.Add(time.Minute)) + 1},
		{"clock still back", t0.Add(-time.Hour), TimeSerial(t0.Add(time.Minute)) + 2},
	}
	s, clk := open(t, NewMemory(), Options{})
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			clk.Set(tt.clock)
			commit(t, s, contrib("vm", map[string][]Record{zone: {a("x.example.com.", "10.0.0.1", "vm"), a("x.example.com.", "10.1.0."+string(rune('0'+i)), "vm")}}))
			if got := s.Snapshot(zone).Serial(); got != tt.want {
				t.Errorf("serial = %d, want %d", got, tt.want)
			}
		})
	}
}

func TestFailedApply(t *testing.T) {
	fb := &failing{Backend: NewMemory()}
	s, _ := open(t, fb, Options{})
	r1, r2, r3 := a("a.example.com.", "10.0.0.1", "vm1"), a("b.example.com.", "10.0.0.2", "vm1"), a("c.example.com.", "10.0.0.3", "vm1")
	commit(t, s, contrib("vm1", map[string][]Record{zone: {r1, r2}}))
	before := s.Snapshot(zone)
	watch := s.Watch()
	fb.set(true)
	_, err := s.Commit(context.Background(), []zonegen.Contribution{contrib("vm1", map[string][]Record{zone: {r2, r3}})})
	if !errors.Is(err, errInjected) {
		t.Fatalf("Commit error = %v, want the injected one", err)
	}
	if s.Snapshot(zone) != before || before.Len() != 2 {
		t.Errorf("snapshot changed after a failed commit")
	}
	if got := s.vms[zone]["vm1"]; !slices.Equal(got, []Record{r1, r2}) {
		t.Errorf("vm1's records after a failed commit = %v", got)
	}
	select {
	case <-watch:
		t.Errorf("Watch fired for a failed commit")
	default:
	}
	fb.set(false)
	d := commit(t, s, contrib("vm1", map[string][]Record{zone: {r2, r3}}))
	want := Diff{Zone: zone, From: before.Serial(), To: before.Serial() + 1, Removed: []Record{r1}, Added: []Record{r3}}
	if len(d) != 1 || !diffEqual(d[0], want) {
		t.Errorf("diff after recovery = %+v, want %+v", d, want)
	}
}

func diffEqual(x, y Diff) bool {
	return x.Zone == y.Zone && x.From == y.From && x.To == y.To &&
		slices.Equal(x.Removed, y.Removed) && slices.Equal(x.Added, y.Added)
}

func TestOldSnapshotUnchanged(t *testing.T) {
	s, _ := open(t, NewMemory(), Options{})
	r1, r2 := a("a.example.com.", "10.0.0.1", "vm1"), a("a.example.com.", "10.0.0.2", "vm1")
	commit(t, s, contrib("vm1", map[string][]Record{zone: {r1}}))
	old := s.Snapshot(zone)
	oldSerial := old.Serial()
	commit(t, s, contrib("vm1", map[string][]Record{zone: {r2}}))
	if old.Serial() != oldSerial || !slices.Equal(old.Lookup("a.example.com."), []Record{r1}) || old.Len() != 1 {
		t.Errorf("old snapshot changed: serial %d, %v", old.Serial(), old.Lookup("a.example.com."))
	}
	if cur := s.Snapshot(zone); !slices.Equal(cur.Lookup("a.example.com."), []Record{r2}) {
		t.Errorf("current snapshot = %v, want %v", cur.Lookup("a.example.com."), r2)
	}
}

func TestWatch(t *testing.T) {
	s, _ := open(t, NewMemory(), Options{})
	w1, w2 := s.Watch(), s.Watch()
	commit(t, s, contrib("vm1", map[string][]Record{zone: {a("a.example.com.", "10.0.0.1", "vm1")}}))
	commit(t, s, contrib("vm1", map[string][]Record{zone: {a("a.example.com.", "10.0.0.2", "vm1")}}))
	for i, w := range []<-chan struct{}{w1, w2} {
		select {
		case <-w:
		default:
			t.Errorf("watcher %d did not fire", i)
		}
		select {
		case <-w:
			t.Errorf("watcher %d holds more than one value", i)
		default:
		}
	}
	s.Unwatch(w1)
	commit(t, s, zonegen.Contribution{VM: "vm1"})
	select {
	case <-w1:
		t.Errorf("unwatched channel fired")
	default:
	}
}

func TestCommitNormalizes(t *testing.T) {
	s, _ := open(t, NewMemory(), Options{})
	x, y := a("x.example.com.", "10.0.0.1", "vm"), a("y.example.com.", "10.0.0.2", "vm")
	wrong := y
	wrong.Source = "someone-else"
	c := zonegen.Contribution{VM: "vm", Zones: []zonegen.ZoneRecords{
		{Zone: zone, Records: []Record{wrong, x, x}}, // unsorted, duplicated, wrong source
		{Zone: zone, Records: []Record{y}},           // the zone listed twice
	}}
	d := commit(t, s, c)
	if want := []Record{x, y}; len(d) != 1 || !slices.Equal(d[0].Added, want) || !slices.Equal(s.vms[zone]["vm"], want) {
		t.Errorf("diff %+v, stored %v; want both %v", d, s.vms[zone]["vm"], want)
	}
	if d := commit(t, s, contrib("vm", map[string][]Record{zone: {x, y}})); len(d) != 0 {
		t.Errorf("the same records again gave diffs %+v", d)
	}
	if d := commit(t, s, zonegen.Contribution{VM: "vm", Unresolved: true}); len(d) != 0 || s.Snapshot(zone).Len() != 2 {
		t.Errorf("an unresolved contribution changed the zone: %+v", d)
	}
}
