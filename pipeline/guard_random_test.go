package pipeline

import (
	"fmt"
	"log/slog"
	"maps"
	"math/rand/v2"
	"os"
	"reflect"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/cnsd/cnsd/mockcloud"
	"github.com/cnsd/cnsd/store"
	"github.com/cnsd/cnsd/zonegen"
)

// TestGuardRandomized interleaves what can hold, settle or bypass the
// mass-deletion guard — re-lists after changes made while cnsd was
// stopped, confirms, compute nodes going down and up, accounts enabled and
// disabled, new settings, single VM changes — and after every step
// compares the store with the oracle: every source no hold keeps has
// exactly the records a fresh cnsd computes from the cloud as it now is.
// At the end every hold is confirmed and the whole store must equal the
// oracle. GUARD_SEED replays a run; GUARD_STEPS makes it longer.
func TestGuardRandomized(t *testing.T) {
	seed := uint64(time.Now().UnixNano())
	if v := os.Getenv("GUARD_SEED"); v != "" {
		seed, _ = strconv.ParseUint(v, 10, 64)
	}
	steps := 40
	if v := os.Getenv("GUARD_STEPS"); v != "" {
		steps, _ = strconv.Atoi(v)
	}
	t.Logf("GUARD_SEED=%d", seed)
	rng := rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))

	s := rulesSettings()
	s.MassDeleteShare, s.MassDeleteMin = 0.2, 2
	w := newWorld(t, withEmptyNode())
	w.level = slog.LevelInfo
	b := store.NewMemory()
	w.start(s, b)
	w.waitGuardOracle(s)

	vms := []string{web1, web2, web3, db1, bobVM}
	next := 6
	alive := func() []string {
		var out []string
		for _, id := range vms {
			if v, ok := w.cloud.VM(id); ok && v.State != "destroyed" {
				out = append(out, id)
			}
		}
		return out
	}
	pick := func(ids []string) string { return ids[rng.IntN(len(ids))] }
	offline := func() string {
		op := rng.IntN(4)
		if len(alive()) == 0 {
			op = 3
		}
		switch op {
		case 0:
			id := pick(alive())
			must[mockcloud.VM](t)(w.cloud.DestroyVM(id))
			return "destroy " + id
		case 1:
			acct := pick([]string{alice, bob})
			v := pick([]string{"true", "false"})
			updateUser(t, w, acct, mockcloud.UserPatch{TritonCNSEnabled: ptr(v)})
			return "account " + acct + " enabled=" + v
		case 2:
			id := pick(alive())
			st := pick([]string{"running", "stopped"})
			must[mockcloud.VM](t)(w.cloud.SetState(id, st))
			return "state " + id + " " + st
		default:
			id := fmt.Sprintf("%08d-0000-4000-8000-%012d", next, next)
			ip := strconv.Itoa(20 + next)
			next++
			tmpl, _ := w.cloud.VM(web1)
			v := mockcloud.VM{UUID: id, Alias: "new" + ip, OwnerUUID: pick([]string{alice, bob}),
				ServerUUID: pick([]string{cn1, cn2}), State: "running", Brand: "joyent",
				CustomerMetadata: map[string]any{"triton.cns.status": "up"},
				Tags:             map[string]any{"triton.cns.services": "web:80"}, NICs: slices.Clone(tmpl.NICs)}
			for i := range v.NICs {
				v.NICs[i].MAC = fmt.Sprintf("90:b8:d0:%02x:%02x:%02x", i, next/256, next%256)
				v.NICs[i].IP = v.NICs[i].IP[:len(v.NICs[i].IP)-2] + ip
			}
			must[mockcloud.VM](t)(w.cloud.CreateVM(v))
			vms = append(vms, id)
			return "create " + id
		}
	}
	for i := range steps {
		var what string
		switch op := rng.IntN(8); op {
		case 0, 1: // changes while no cnsd runs, then a re-list
			w.stop()
			n := 1 + rng.IntN(3)
			what = "restart after:"
			for range n {
				what += " " + offline() + ";"
			}
			w.start(s, b)
		case 2:
			if h := w.p.Holds(); len(h) > 0 {
				c := h[rng.IntN(len(h))].Cause
				what = "confirm " + c
				if err := w.p.Confirm(c); err != nil {
					t.Fatalf("step %d: %s: %v", i, what, err)
				}
			} else {
				what = "confirm (nothing held)"
			}
		case 3:
			cn := pick([]string{cn1, cn2})
			if rng.IntN(2) == 0 {
				down, old := "unknown", w.clock.Now().Add(-2*time.Hour).UTC().Format(time.RFC3339)
				must[mockcloud.Server](t)(w.cloud.UpdateServer(cn, mockcloud.ServerPatch{Status: &down, LastHeartbeat: &old}))
				what = "down " + cn
			} else {
				up, now := "running", w.clock.Now().UTC().Format(time.RFC3339)
				must[mockcloud.Server](t)(w.cloud.UpdateServer(cn, mockcloud.ServerPatch{Status: &up, LastHeartbeat: &now}))
				what = "up " + cn
			}
		case 4:
			acct := pick([]string{alice, bob})
			v := pick([]string{"true", "false"})
			updateUser(t, w, acct, mockcloud.UserPatch{TritonCNSEnabled: ptr(v)})
			what = "account " + acct + " enabled=" + v
		case 5:
			s.Naming.UseAlias = !s.Naming.UseAlias
			w.p.SetSettings(s)
			what = "settings use_alias=" + strconv.FormatBool(s.Naming.UseAlias)
		default:
			what = "live " + offline()
		}
		w.waitGuardOracle(s)
		t.Logf("step %d: %s; then held: %v", i, what, holdSummary(w.p.Holds()))
	}
	for _, h := range w.p.Holds() {
		if err := w.p.Confirm(h.Cause); err != nil {
			t.Fatal(err)
		}
	}
	w.waitOracle(s)
}

func holdSummary(hs []Hold) []string {
	out := make([]string, len(hs))
	for i, h := range hs {
		out[i] = fmt.Sprintf("%s:%d", h.Cause, len(h.VMs))
	}
	return out
}

// waitGuardOracle waits until the pipeline is idle and every source that
// no hold keeps has the oracle's records in the store; a held source may
// keep what it had.
func (w *world) waitGuardOracle(s Settings) {
	w.t.Helper()
	var diff string
	ok := func() bool {
		if !w.p.Idle() {
			return false
		}
		held := map[string]bool{}
		for _, h := range w.p.Holds() {
			for _, src := range h.VMs {
				held[src] = true
			}
		}
		want := oracleSources(w.t, w.cloud.Fixture(), s, w.clock.Now())
		sources := map[string]bool{}
		for src := range want {
			sources[src] = true
		}
		for _, src := range w.store.Sources() {
			if _, cn := zonegen.ComputeNodeOf(src); isUUID(src) || cn {
				sources[src] = true
			}
		}
		for _, src := range slices.Sorted(maps.Keys(sources)) {
			if held[src] {
				continue
			}
			if got := storeSource(w.store, src); !reflect.DeepEqual(got, want[src]) {
				diff = fmt.Sprintf("%s: store %v, oracle %v", src, got, want[src])
				return false
			}
		}
		return true
	}
	deadline := time.Now().Add(w.limit)
	for !ok() {
		if time.Now().After(deadline) {
			w.t.Fatalf("timed out waiting for every source no hold keeps to equal the oracle (holds %v): %s\nlog tail:\n%s",
				holdSummary(w.p.Holds()), diff, tail(w.logs.String(), 30))
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// storeSource is the store's records of source in oracleSources' shape.
func storeSource(st *store.Store, source string) map[string][]string {
	c := st.Contribution(source)
	var out map[string][]string
	for _, z := range c.Zones {
		for _, r := range z.Records {
			if out == nil {
				out = map[string][]string{}
			}
			out[z.Zone] = append(out[z.Zone], r.String())
		}
	}
	for zone, recs := range out {
		slices.Sort(recs)
		out[zone] = slices.Compact(recs)
	}
	return out
}
