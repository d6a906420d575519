package redis

import (
	"context"
	"fmt"
	"maps"
	"math/rand/v2"
	"reflect"
	"slices"
	"testing"
	"time"

	"github.com/cnsd/cnsd/store"
	"github.com/cnsd/cnsd/store/redistest"
	"github.com/cnsd/cnsd/zonegen"
)

// crashModel generates commits and remembers, per zone, the state and the
// diff of every serial it produced, so a store found after a crash can be
// checked against the serial it holds.
type crashModel struct {
	rnd   *rand.Rand
	zones []string
	cur   map[string]store.Serial
	state map[string]map[store.Serial]map[string][]store.Record // zone → serial → VM → records
	diffs map[string]map[store.Serial]store.Diff                // zone → serial → diff ending there
	acked map[string]store.Serial                               // highest serial Apply confirmed
}

const (
	crashZones      = 8
	crashVMs        = 30
	crashKeep       = 10
	crashIterations = 5
)

func newCrashModel(seed uint64) *crashModel {
	m := &crashModel{rnd: rand.New(rand.NewPCG(seed, 1)), cur: map[string]store.Serial{},
		state: map[string]map[store.Serial]map[string][]store.Record{}, diffs: map[string]map[store.Serial]store.Diff{},
		acked: map[string]store.Serial{}}
	for i := range crashZones {
		z := fmt.Sprintf("z%d.crash.test.", i)
		m.zones = append(m.zones, z)
		m.state[z] = map[store.Serial]map[string][]store.Record{0: {}}
		m.diffs[z] = map[store.Serial]store.Diff{}
	}
	return m
}

// commit builds the next commit: three zones, four VMs changed in each.
func (m *crashModel) commit() []store.ZoneChange {
	var out []store.ZoneChange
	for _, zi := range m.rnd.Perm(len(m.zones))[:3] {
		z := m.zones[zi]
		prev := m.cur[z]
		next := prev + 1
		old := m.state[z][prev]
		now := maps.Clone(old)
		c := store.ZoneChange{Zone: z, Prev: prev, Next: next, SetVMs: map[string][]store.Record{}, KeepJournal: crashKeep}
		for _, vi := range m.rnd.Perm(crashVMs)[:4] {
			vm := fmt.Sprintf("vm-%02d", vi)
			if _, ok := now[vm]; ok && m.rnd.IntN(5) == 0 {
				delete(now, vm)
				c.DelVMs = append(c.DelVMs, vm)
				continue
			}
			var recs []store.Record
			for j := range 1 + m.rnd.IntN(3) {
				recs = append(recs, store.Record{Name: fmt.Sprintf("h%d.%s", j, z), Type: zonegen.TypeA,
					Data: fmt.Sprintf("10.%d.%d.%d", vi, j, m.rnd.IntN(256)), Source: vm})
			}
			now[vm] = recs
			c.SetVMs[vm] = recs
		}
		c.Diff = redisDiffStates(z, prev, next, old, now)
		m.state[z][next] = now
		m.diffs[z][next] = c.Diff
		m.cur[z] = next
		out = append(out, c)
	}
	return out
}

// redisDiffStates lists the records removed and added between two states.
func redisDiffStates(zone string, from, to store.Serial, old, now map[string][]store.Record) store.Diff {
	set := func(s map[string][]store.Record) map[store.Record]bool {
		out := map[store.Record]bool{}
		for _, recs := range s {
			for _, r := range recs {
				out[r] = true
			}
		}
		return out
	}
	o, n := set(old), set(now)
	d := store.Diff{Zone: zone, From: from, To: to}
	for r := range o {
		if !n[r] {
			d.Removed = append(d.Removed, r)
		}
	}
	for r := range n {
		if !o[r] {
			d.Added = append(d.Added, r)
		}
	}
	slices.SortFunc(d.Removed, store.Record.Compare)
	slices.SortFunc(d.Added, store.Record.Compare)
	return d
}

func TestRedisCrashAtomicity(t *testing.T) {
	srv := redistest.Start(t)
	seed := uint64(time.Now().UnixNano())
	t.Logf("seed %d", seed)
	m := newCrashModel(seed)
	for iter := range crashIterations {
		// A new client each time, as after a cnsd restart: go-redis
		// refuses to dial for a while after failed dials.
		// No retries: the Apply that meets the kill should fail fast.
		r := openRedisAt(t, srv.URL()+"?max_retries=-1", Options{})
		commits := m.run(t, r, srv)
		srv.Restart()
		r = openRedisAt(t, srv.URL(), Options{})
		got, err := r.Load(context.Background(), func(key string, err error) {
			t.Errorf("iteration %d: Load reported %s: %v", iter, key, err)
		})
		redisMust(t, err)
		m.check(t, iter, got)
		t.Logf("iteration %d: killed after %d commits", iter, commits)
	}
}

// run applies commits until a random moment, when it kills the server;
// it returns the number of acknowledged commits.
func (m *crashModel) run(t *testing.T, r *Backend, srv *redistest.Server) int {
	killAfter := time.Duration(20+m.rnd.IntN(200)) * time.Millisecond
	done := make(chan int)
	go func() {
		n := 0
		defer func() { done <- n }()
		for {
			changes := m.commit()
			if err := r.Apply(context.Background(), 1, changes); err != nil {
				return // the kill
			}
			for _, c := range changes {
				m.acked[c.Zone] = c.Next
			}
			n++
		}
	}()
	time.Sleep(killAfter)
	srv.Kill()
	return <-done
}

// check compares what survived with the model and continues the model
// from it.
func (m *crashModel) check(t *testing.T, iter int, got map[string]*store.ZoneData) {
	t.Helper()
	for _, z := range m.zones {
		zd := got[z]
		var s store.Serial
		if zd != nil {
			s = zd.Serial
		}
		if s < m.acked[z] || s > m.cur[z] {
			t.Fatalf("iteration %d: zone %s at serial %d; acknowledged %d, attempted %d", iter, z, s, m.acked[z], m.cur[z])
		}
		if zd == nil {
			m.cur[z] = 0
			continue
		}
		want := m.state[z][s]
		if !reflect.DeepEqual(zd.VMs, want) {
			t.Fatalf("iteration %d: zone %s serial %d holds\n%v\nwant\n%v", iter, z, s, zd.VMs, want)
		}
		if len(zd.Journal) == 0 || zd.Journal[len(zd.Journal)-1].To != s {
			t.Fatalf("iteration %d: zone %s serial %d: journal %v does not end there", iter, z, s, zd.Journal)
		}
		if len(zd.Journal) > crashKeep {
			t.Errorf("iteration %d: zone %s journal has %d entries, keep %d", iter, z, len(zd.Journal), crashKeep)
		}
		for _, d := range zd.Journal {
			if want := m.diffs[z][d.To]; !reflect.DeepEqual(d, want) {
				t.Fatalf("iteration %d: zone %s journal entry to %d = %+v, want %+v", iter, z, d.To, d, want)
			}
		}
		m.cur[z] = s
	}
}
