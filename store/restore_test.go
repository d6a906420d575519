package store

import (
	"context"
	"errors"
	"maps"
	"slices"
	"testing"
	"time"

	"github.com/cnsd/cnsd/zonegen"
)

// checkpoint returns a function that puts m back to the state it has
// now, as a failover to a replica that missed the later commits does.
func checkpoint(m *Memory) (rollback func()) {
	m.mu.Lock()
	defer m.mu.Unlock()
	zones := map[string]*ZoneData{}
	for name, z := range m.zones {
		zones[name] = copyZone(z)
	}
	floors := maps.Clone(m.floors)
	return func() {
		m.mu.Lock()
		defer m.mu.Unlock()
		m.zones, m.floors = zones, floors
	}
}

// servedSerials returns every published zone's serial.
func servedSerials(s *Store) map[string]Serial {
	out := map[string]Serial{}
	for _, z := range s.Zones() {
		out[z] = s.Snapshot(z).Serial()
	}
	return out
}

// requireNoSerialBack fails t when a zone of before is served at an
// older serial now.
func requireNoSerialBack(t *testing.T, before, now map[string]Serial) {
	t.Helper()
	for z, b := range before {
		if n, ok := now[z]; ok && n.Less(b) {
			t.Errorf("zone %s went back from serial %d to %d", z, b, n)
		}
	}
}

// requireBackendServes fails t unless the backend holds exactly what s
// serves, zone by zone, at the same serials.
func requireBackendServes(t *testing.T, b Backend, s *Store) {
	t.Helper()
	data, err := b.Load(context.Background(), nil)
	if err != nil {
		t.Fatalf("Load: %v", err)
	}
	if got, want := slices.Sorted(maps.Keys(data)), s.Zones(); !slices.Equal(got, want) {
		t.Fatalf("backend holds zones %v, store serves %v", got, want)
	}
	for _, z := range s.Zones() {
		re := buildSnapshot(z, data[z].Serial, data[z].VMs, 0)
		got := slices.Collect(re.All())
		slices.SortFunc(got, Record.Compare)
		if want := all(s, z); !slices.EqualFunc(got, want, func(a, b Record) bool { return a.Compare(b) == 0 }) {
			t.Errorf("zone %s: backend holds %v, store serves %v", z, got, want)
		}
		if data[z].Serial != s.Snapshot(z).Serial() {
			t.Errorf("zone %s: backend at serial %d, store serves %d", z, data[z].Serial, s.Snapshot(z).Serial())
		}
	}
}

const (
	zoneFwd = "dc1.cns.example.com"
	zoneRev = "2.0.192.in-addr.arpa"
)

func fwd(vm, name, addr string) Record { return a(name+"."+zoneFwd, addr, vm) }

// lostCommits returns a Store over a Memory backend that committed vm1,
// then (a minute later) vm2 in the forward zone and vm3 in a new reverse
// zone, and the rollback that takes the backend back to vm1 alone: a
// failover to a replica that missed the last two commits.
func lostCommits(t *testing.T) (*Memory, *Store, func()) {
	t.Helper()
	m := NewMemory()
	s, clk := open(t, m, Options{})
	commit(t, s, contrib("vm1", map[string][]Record{zoneFwd: {fwd("vm1", "one", "192.0.2.1")}}))
	rollback := checkpoint(m)
	clk.Set(t0.Add(time.Minute))
	commit(t, s, contrib("vm2", map[string][]Record{zoneFwd: {fwd("vm2", "two", "192.0.2.2")}}))
	commit(t, s, contrib("vm3", map[string][]Record{zoneRev: {ptr("3."+zoneRev, "three."+zoneFwd, "vm3")}}))
	return m, s, rollback
}

// TestCommitWritesBackLostCommits: the backend falls back to an earlier
// state (a failover). The commit that finds out fails, nothing served
// goes back, and the next one writes the zones back whole above the
// served serials before its own change.
func TestCommitWritesBackLostCommits(t *testing.T) {
	m, s, rollback := lostCommits(t)
	before := servedSerials(s)
	rollback()

	_, err := s.Commit(context.Background(), []zonegen.Contribution{contrib("vm4", map[string][]Record{zoneFwd: {fwd("vm4", "four", "192.0.2.4")}})})
	if !errors.Is(err, ErrConflict) {
		t.Fatalf("first commit after the loss: %v, want a conflict", err)
	}
	requireNoSerialBack(t, before, servedSerials(s))
	if got := servedSerials(s); !maps.Equal(got, before) {
		t.Errorf("after the failed commit the store serves %v, want %v as before", got, before)
	}
	commit(t, s, contrib("vm4", map[string][]Record{zoneFwd: {fwd("vm4", "four", "192.0.2.4")}}))
	after := servedSerials(s)
	requireNoSerialBack(t, before, after)
	for z := range before {
		if after[z] == before[z] {
			t.Errorf("zone %s still at serial %d after being written back: secondaries would not take it", z, after[z])
		}
	}
	if n := len(all(s, zoneFwd)); n != 3 {
		t.Errorf("zone %s serves %d records, want 3 (vm1, vm2, vm4)", zoneFwd, n)
	}
	requireBackendServes(t, m, s)
	if n := s.ZonesRestored(); n != 2 {
		t.Errorf("ZonesRestored = %d, want 2", n)
	}
}

// TestVerifyWritesBackLostCommits: without any commit coming, Verify
// finds the zones the backend lost and writes them back.
func TestVerifyWritesBackLostCommits(t *testing.T) {
	m, s, rollback := lostCommits(t)
	before := servedSerials(s)

	if found, err := s.Verify(context.Background()); err != nil || len(found) != 0 {
		t.Fatalf("Verify of an intact backend = %v, %v; want nothing", found, err)
	}
	rollback()
	found, err := s.Verify(context.Background())
	if err != nil {
		t.Fatalf("Verify: %v", err)
	}
	if want := []string{zoneRev, zoneFwd}; !slices.Equal(found, want) {
		t.Errorf("Verify found %v behind, want %v", found, want)
	}
	after := servedSerials(s)
	for z := range before {
		if !before[z].Less(after[z]) {
			t.Errorf("zone %s at %d after the write-back, want above %d", z, after[z], before[z])
		}
	}
	requireBackendServes(t, m, s)
	if found, err := s.Verify(context.Background()); err != nil || len(found) != 0 {
		t.Errorf("Verify after the write-back = %v, %v; want nothing", found, err)
	}
	// A fresh store on the backend serves the same.
	s2, _ := open(t, m, Options{})
	if !maps.Equal(servedSerials(s2), after) {
		t.Errorf("reopened store serves %v, want %v", servedSerials(s2), after)
	}
}

// TestVerifyDropsAResurrectedZone: the backend lost the drop of a zone;
// Verify drops it again with a floor above the final serial secondaries
// saw, so the zone, made again, continues above both.
func TestVerifyDropsAResurrectedZone(t *testing.T) {
	m := NewMemory()
	s, clk := open(t, m, Options{})
	commit(t, s, contrib("vm1", map[string][]Record{zoneFwd: {fwd("vm1", "one", "192.0.2.1")}}),
		contrib("vm3", map[string][]Record{zoneRev: {ptr("3."+zoneRev, "three."+zoneFwd, "vm3")}}))
	rollback := checkpoint(m)
	clk.Set(t0.Add(time.Minute))
	commit(t, s, contrib("vm3", nil)) // the reverse zone empties and is dropped
	if s.Snapshot(zoneRev) != nil {
		t.Fatalf("zone %s still served after its last VM left", zoneRev)
	}
	final := s.dropped[zoneRev]
	rollback()

	found, err := s.Verify(context.Background())
	if err != nil || !slices.Equal(found, []string{zoneRev}) {
		t.Fatalf("Verify = %v, %v; want [%s]", found, err, zoneRev)
	}
	if s.Snapshot(zoneRev) != nil {
		t.Errorf("zone %s served again after Verify", zoneRev)
	}
	requireBackendServes(t, m, s)
	floors, _ := m.Floors(context.Background())
	if f := floors[zoneRev]; !final.Less(f) {
		t.Errorf("backend floor of %s = %d, want above the final serial %d", zoneRev, f, final)
	}
	commit(t, s, contrib("vm5", map[string][]Record{zoneRev: {ptr("5."+zoneRev, "five."+zoneFwd, "vm5")}}))
	if got := s.Snapshot(zoneRev).Serial(); !floors[zoneRev].Less(got) {
		t.Errorf("zone %s made again at %d, not above its floor %d", zoneRev, got, floors[zoneRev])
	}
}

// TestFollowerKeepsServingWhatTheBackendLost: a following store never
// goes back when the backend does, keeps a zone that vanished without a
// drop, does not take up a zone it saw dropped, and takes the writer's
// write-back.
func TestFollowerKeepsServingWhatTheBackendLost(t *testing.T) {
	m := NewMemory()
	w, clk := open(t, m, Options{})
	commit(t, w, contrib("vm1", map[string][]Record{zoneFwd: {fwd("vm1", "one", "192.0.2.1")}}),
		contrib("vm9", map[string][]Record{"gone.example.com": {a("x.gone.example.com", "192.0.2.9", "vm9")}}))
	rollback := checkpoint(m)
	clk.Set(t0.Add(time.Minute))
	commit(t, w, contrib("vm9", nil)) // gone.example.com is dropped
	commit(t, w, contrib("vm2", map[string][]Record{zoneFwd: {fwd("vm2", "two", "192.0.2.2")}}))
	commit(t, w, contrib("vm3", map[string][]Record{zoneRev: {ptr("3."+zoneRev, "three."+zoneFwd, "vm3")}}))

	f, _ := open(t, m, Options{})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- f.Follow(ctx, m) }()
	want := servedSerials(w)
	waitFor(t, func() bool { return maps.Equal(servedSerials(f), want) }, "follower caught up")

	rollback()
	// Another writer's commit wakes the follower; it must keep its state.
	if err := m.Apply(context.Background(), 0, nil); err != nil {
		t.Fatal(err)
	}
	for range 20 {
		got := servedSerials(f)
		requireNoSerialBack(t, want, got)
		if !maps.Equal(got, want) {
			t.Fatalf("follower serves %v after the backend's loss, want %v", got, want)
		}
		time.Sleep(10 * time.Millisecond)
	}

	if _, err := w.Verify(context.Background()); err != nil {
		t.Fatalf("writer Verify: %v", err)
	}
	want = servedSerials(w)
	waitFor(t, func() bool { return maps.Equal(servedSerials(f), want) }, "follower took the write-back")
	if f.Snapshot("gone.example.com") != nil {
		t.Error("follower serves the dropped zone again")
	}
	cancel()
	<-done
}

func waitFor(t *testing.T, cond func() bool, what string) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting: %s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// TestOpenAfterTakesOverWhatTheFollowerServed: the failover that lost
// commits also handed the lease to a process that had followed them. Its
// new writing Store serves what it served (no serial back), writes it
// back, and knows each VM's records: a VM leaving takes its records.
func TestOpenAfterTakesOverWhatTheFollowerServed(t *testing.T) {
	m := NewMemory()
	w, clk := open(t, m, Options{})
	commit(t, w, contrib("vm1", map[string][]Record{zoneFwd: {fwd("vm1", "one", "192.0.2.1")}}),
		contrib("vm9", map[string][]Record{"gone.example.com": {a("x.gone.example.com", "192.0.2.9", "vm9")}}))
	rollback := checkpoint(m)
	clk.Set(t0.Add(time.Minute))
	shared := fwd("vm2", "svc", "192.0.2.7")
	commit(t, w, contrib("vm9", nil))
	commit(t, w, contrib("vm2", map[string][]Record{zoneFwd: {fwd("vm2", "two", "192.0.2.2"), shared}}),
		contrib("vm3", map[string][]Record{zoneFwd: {fwd("vm3", "svc", "192.0.2.7")}, zoneRev: {ptr("3."+zoneRev, "three."+zoneFwd, "vm3")}}))

	f, _ := open(t, m, Options{})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- f.Follow(ctx, m) }()
	want := servedSerials(w)
	waitFor(t, func() bool { return maps.Equal(servedSerials(f), want) }, "follower caught up")
	cancel()
	<-done
	rollback()

	n, err := OpenAfter(context.Background(), m, Options{Clock: clk.Now, Epoch: 2}, nil, f)
	if err != nil {
		t.Fatal(err)
	}
	if got := servedSerials(n); !maps.Equal(got, want) {
		t.Fatalf("new writer serves %v, the follower served %v", got, want)
	}
	if n.Snapshot("gone.example.com") != nil {
		t.Error("new writer serves the zone the follower saw dropped")
	}
	// vm2 leaves: its own record goes, the one vm3 provides too stays.
	commit(t, n, contrib("vm2", nil))
	after := servedSerials(n)
	requireNoSerialBack(t, want, after)
	for z := range want {
		if !want[z].Less(after[z]) {
			t.Errorf("zone %s at %d, want above %d", z, after[z], want[z])
		}
	}
	got := all(n, zoneFwd)
	names := make([]string, len(got))
	for i, r := range got {
		names[i] = r.Name
	}
	if wantNames := []string{"one." + zoneFwd, "svc." + zoneFwd}; !slices.Equal(names, wantNames) {
		t.Errorf("zone %s serves %v, want %v", zoneFwd, names, wantNames)
	}
	requireBackendServes(t, m, n)
	floors, _ := m.Floors(context.Background())
	if _, ok := floors["gone.example.com"]; !ok {
		t.Error("the dropped zone has no floor in the backend after the takeover")
	}
}

// afterLostCommits stages a failover that lost commits: a writer commits
// vm1, then, a minute later, each of lost; the backend then goes back to
// vm1 alone. It returns the backend; a new writer n (epoch 2) opened on
// the stale store, which knows nothing of lost; the old writer's process
// f, following now with what it served (OpenAfter), not yet started; and
// the serial of zoneFwd f serves.
func afterLostCommits(t *testing.T, lost ...zonegen.Contribution) (m *Memory, n, f *Store, served Serial) {
	t.Helper()
	m = NewMemory()
	w, clk := open(t, m, Options{})
	commit(t, w, contrib("vm1", map[string][]Record{zoneFwd: {fwd("vm1", "one", "192.0.2.1")}}))
	rollback := checkpoint(m)
	clk.Set(t0.Add(time.Minute))
	for _, c := range lost {
		commit(t, w, c)
	}
	served = w.Snapshot(zoneFwd).Serial()
	rollback()
	n, _ = open(t, m, Options{Clock: clk.Now, Epoch: 2})
	f, err := OpenAfter(context.Background(), m, Options{Clock: clk.Now}, nil, w)
	if err != nil {
		t.Fatal(err)
	}
	return m, n, f, served
}

// TestFollowerHintRaisesTheWriter: a writer that never knew the commits
// a failover lost (it opened on the stale store) is told of them by a
// follower that served them; it raises the zone past the follower's
// serial and the follower takes its zone, its serial going forward only.
func TestFollowerHintRaisesTheWriter(t *testing.T) {
	m, n, f, served := afterLostCommits(t,
		contrib("vm2", map[string][]Record{zoneFwd: {fwd("vm2", "two", "192.0.2.2")}}),
		contrib("vm3", map[string][]Record{zoneFwd: {fwd("vm3", "three", "192.0.2.3")}}))
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- f.Follow(ctx, m) }()
	waitFor(t, func() bool { h, _ := m.SerialHints(ctx); return h[zoneFwd] == served }, "the follower's hint")
	if got := f.Snapshot(zoneFwd).Serial(); got != served {
		t.Fatalf("follower serves %d, want %d as before", got, served)
	}
	if _, err := n.Verify(ctx); err != nil {
		t.Fatalf("writer Verify: %v", err)
	}
	raised := n.Snapshot(zoneFwd).Serial()
	if !served.Less(raised) {
		t.Fatalf("writer at %d after the hint, want above %d", raised, served)
	}
	if h, _ := m.SerialHints(ctx); len(h) != 0 {
		t.Errorf("hints left after the raise: %v", h)
	}
	waitFor(t, func() bool { return f.Snapshot(zoneFwd).Serial() == raised }, "the follower takes the writer's zone")
	if got, want := len(all(f, zoneFwd)), len(all(n, zoneFwd)); got != want {
		t.Errorf("follower serves %d records, the writer %d", got, want)
	}
	cancel()
	<-done
}

// TestFollowerDropsAVanishedZoneAfterGrace: a zone gone from the store
// without a drop, which no writer writes back, is served for vanishGrace
// and then no longer.
func TestFollowerDropsAVanishedZoneAfterGrace(t *testing.T) {
	m := NewMemory()
	w, clk := open(t, m, Options{})
	rollback := checkpoint(m)
	commit(t, w, contrib("vm1", map[string][]Record{zoneFwd: {fwd("vm1", "one", "192.0.2.1")}}))
	f, _ := open(t, m, Options{Clock: clk.Now})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- f.Follow(ctx, m) }()
	rollback()
	wake := func() {
		if err := m.Apply(ctx, 0, nil); err != nil {
			t.Fatal(err)
		}
	}
	wake()
	time.Sleep(50 * time.Millisecond)
	if f.Snapshot(zoneFwd) == nil {
		t.Fatal("follower dropped the vanished zone at once")
	}
	clk.Set(t0.Add(vanishGrace + time.Second))
	wake()
	waitFor(t, func() bool { return f.Snapshot(zoneFwd) == nil }, "the follower drops the zone after the grace")
	cancel()
	<-done
}

// TestFollowerAtItsSerialWithOtherRecords: a failover lost commits a
// process published (serial S), and the new writer, which never saw them,
// reached S on its own with other records. The process, now following,
// must not take the backend's S as the one it serves, nor any diff from
// it: it keeps serving its own and hints the writer, which raises the
// zone past S, and then takes the zone whole.
func TestFollowerAtItsSerialWithOtherRecords(t *testing.T) {
	m, n, f, served := afterLostCommits(t, contrib("vm2", map[string][]Record{zoneFwd: {fwd("vm2", "two", "192.0.2.2")}}))
	commit(t, n, contrib("vm4", map[string][]Record{zoneFwd: {fwd("vm4", "four", "192.0.2.4")}}))
	if got := n.Snapshot(zoneFwd).Serial(); got != served {
		t.Fatalf("the new writer reached %d, not the lost %d: the case this test is about did not happen", got, served)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- f.Follow(ctx, m) }()
	waitFor(t, func() bool { h, _ := m.SerialHints(ctx); return h[zoneFwd] == served }, "the follower's hint of its serial")
	if got := all(f, zoneFwd); len(got) != 2 || got[1].Name != "two."+zoneFwd {
		t.Fatalf("follower serves %v at the collided serial, want its own records", got)
	}
	if _, err := n.Verify(ctx); err != nil {
		t.Fatalf("writer Verify: %v", err)
	}
	raised := n.Snapshot(zoneFwd).Serial()
	if !served.Less(raised) {
		t.Fatalf("writer at %d after the hint, want above %d", raised, served)
	}
	waitFor(t, func() bool { return f.Snapshot(zoneFwd).Serial() == raised }, "the follower takes the raised zone")
	if got, want := all(f, zoneFwd), all(n, zoneFwd); !slices.EqualFunc(got, want, func(x, y Record) bool { return rrCompare(x, y) == 0 }) {
		t.Errorf("follower serves %v, the writer %v", got, want)
	}
	// A secondary that took S from this process holds its records: an
	// IXFR from S must not be answered with the writer's diff from its S.
	if _, err := f.DiffSince(zoneFwd, served); !errors.Is(err, ErrNotCovered) {
		t.Errorf("follower's IXFR from the collided serial %d: err %v, want ErrNotCovered (AXFR)", served, err)
	}
	cancel()
	<-done
}
