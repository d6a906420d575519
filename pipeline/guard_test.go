package pipeline

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cnsd/cnsd/mockcloud"
	"github.com/cnsd/cnsd/store"
)

func TestRelistRemovesVMsDestroyedMeanwhile(t *testing.T) {
	s := rulesSettings()
	w := newWorld(t, rulesFixture())
	b := store.NewMemory()
	w.start(s, b)
	w.waitOracle(s)
	w.stop()
	// One VM of five goes while nothing follows the changefeed: less
	// than the guard's share, so the re-list at the next start removes it.
	must[mockcloud.VM](t)(w.cloud.DestroyVM(bobVM))
	w.start(s, b)
	w.waitOracle(s)
	if h := w.p.Holds(); len(h) != 0 {
		t.Errorf("Holds() = %+v, want none", h)
	}
}

func TestRelistMassDeletionHeldUntilConfirmed(t *testing.T) {
	s := rulesSettings()
	w := newWorld(t, rulesFixture())
	b := store.NewMemory()
	w.start(s, b)
	w.waitOracle(s)
	before := w.records()
	w.stop()
	for _, id := range []string{web1, web2, db1} {
		must[mockcloud.VM](t)(w.cloud.DestroyVM(id))
	}
	w.start(s, b)
	w.waitFor("a held re-list", func() bool { return len(w.p.Holds()) == 1 && w.p.Idle() })
	h := w.p.Holds()[0]
	if h.Cause != CauseRelist || !slices.Equal(h.VMs, []string{web1, web2, db1}) || len(h.Zones) == 0 {
		t.Fatalf("hold = %+v, want the re-list of web1, web2 and db1", h)
	}
	for _, z := range h.Zones {
		if z.Removed*4 <= z.Records {
			t.Errorf("zone %s held with %d of %d records removed: not over 25%%", z.Zone, z.Removed, z.Records)
		}
	}
	if got := w.records(); !equalRecords(got, before) {
		t.Fatalf("records changed while the deletion is held")
	}
	if !strings.Contains(w.logs.String(), "mass deletion held") {
		t.Errorf("no log line says the deletion is held")
	}
	// A new VM and a new listing: the same zones held, other counts. The
	// hold is the same one to an operator: no second line.
	v, _ := w.cloud.VM(web3)
	v.UUID, v.Alias = "00000007-0000-4000-8000-000000000007", "web7"
	v.NICs = slices.Clone(v.NICs)
	for i := range v.NICs {
		v.NICs[i].IP, v.NICs[i].MAC = fmt.Sprintf("%s7", v.NICs[i].IP[:len(v.NICs[i].IP)-1]), fmt.Sprintf("90:b8:d0:00:%02x:77", i)
	}
	must[mockcloud.VM](t)(w.cloud.CreateVM(v))
	w.waitAddrs("web7.inst.alice.pub.example.com.", v.NICs[0].IP)
	w.cloud.DisconnectAll()
	w.waitFor("the hold with the zones' new counts", func() bool {
		hs := w.p.Holds()
		return len(hs) == 1 && !slices.Equal(hs[0].Zones, h.Zones) && w.p.Idle()
	})
	if got := strings.Count(w.logs.String(), "mass deletion held"); got != 1 {
		t.Errorf("%d lines say the deletion is held, want 1:\n%s", got, w.logs)
	}
	if err := w.p.Confirm(CauseComputeNodes); err == nil {
		t.Errorf("Confirm of a cause with nothing held succeeded")
	}
	if err := w.p.Confirm(CauseRelist); err != nil {
		t.Fatal(err)
	}
	w.waitOracle(s)
	if len(w.p.Holds()) != 0 {
		t.Errorf("Holds() after Confirm = %+v", w.p.Holds())
	}
}

// TestRelistHoldVerifiedGone: with Config.Verify, the VMs a re-list
// holds for having left are asked about one by one; VMAPI answers them
// destroyed, and they go without an operator.
func TestRelistHoldVerifiedGone(t *testing.T) {
	s := rulesSettings()
	w := newWorld(t, rulesFixture())
	w.verify = true
	b := store.NewMemory()
	w.start(s, b)
	w.waitOracle(s)
	w.stop()
	for _, id := range []string{web1, web2, db1} {
		must[mockcloud.VM](t)(w.cloud.DestroyVM(id))
	}
	w.start(s, b)
	w.waitOracle(s)
	w.waitFor("no hold", func() bool { return len(w.p.Holds()) == 0 && w.p.Idle() })
	if !strings.Contains(w.logs.String(), "mass deletion held") {
		t.Errorf("the re-list was never held: the guard did not see it")
	}
}

// TestRelistHoldVerifiedPresent: a listing that leaves out VMs VMAPI
// still has (the failure the guard is for) is held, and asking VMAPI
// about each puts them back: no record is lost, and nothing is left for
// an operator. VMAPI answers about web2 last: once web1 and db1 are back,
// what is left of the hold (web2's removal) no longer deletes en masse,
// but it still waits for VMAPI's answer about web2, since the listing
// that left it out was wrong about the others.
func TestRelistHoldVerifiedPresent(t *testing.T) {
	s := rulesSettings()
	w := newWorld(t, rulesFixture())
	w.verify = true
	hidden := map[string]bool{web1: true, web2: true, db1: true}
	var hide atomic.Bool
	web2Gate := make(chan struct{})
	var closeGate sync.Once
	openGate := func() { closeGate.Do(func() { close(web2Gate) }) }
	cloud := w.cloud.Handler()
	short := httptest.NewServer(http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/vms/"+web2 && hide.Load() {
			<-web2Gate
		}
		if r.URL.Path != "/vms" || !hide.Load() {
			cloud.ServeHTTP(rw, r)
			return
		}
		rec := httptest.NewRecorder()
		cloud.ServeHTTP(rec, r)
		var page []map[string]any
		if err := json.Unmarshal(rec.Body.Bytes(), &page); err != nil {
			t.Errorf("listing page: %v", err)
		}
		page = slices.DeleteFunc(page, func(vm map[string]any) bool { return hidden[vm["uuid"].(string)] })
		rw.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(rw).Encode(page)
	}))
	t.Cleanup(short.Close)
	t.Cleanup(openGate)
	w.url = short.URL
	w.start(s, store.NewMemory())
	w.waitOracle(s)
	before := w.records()
	hide.Store(true)
	w.cloud.DisconnectAll()
	w.waitFor("web1 and db1 verified, web2 not", func() bool {
		if !strings.Contains(w.logs.String(), "mass deletion held") || !w.p.Idle() {
			return false
		}
		for _, h := range w.p.Holds() {
			if slices.Contains(h.VMs, web1) || slices.Contains(h.VMs, db1) {
				return false
			}
		}
		return true
	})
	if got := w.records(); !equalRecords(got, before) {
		t.Errorf("records changed before VMAPI answered about web2")
	}
	if h := w.p.Holds(); len(h) != 1 || !slices.Equal(h[0].VMs, []string{web2}) || len(h[0].Zones) != 0 {
		t.Errorf("holds while VMAPI has not answered about web2: %+v, want web2 waiting, no zone over the limit", h)
	}
	openGate()
	w.waitFor("the held re-list verified away", func() bool { return len(w.p.Holds()) == 0 && w.p.Idle() })
	if got := w.records(); !equalRecords(got, before) {
		t.Errorf("records changed by a listing that left out VMs VMAPI has")
	}
}

func TestComputeNodeOutageHeldUntilItClears(t *testing.T) {
	s := rulesSettings()
	s.MassDeleteShare, s.MassDeleteMin = 0.05, 1
	w := startWorld(t, rulesFixture(), s)
	w.waitOracle(s)
	before := w.records()
	down, old := "unknown", w.clock.Now().Add(-2*time.Hour).UTC().Format(time.RFC3339)
	must[mockcloud.Server](t)(w.cloud.UpdateServer(cn2, mockcloud.ServerPatch{Status: &down, LastHeartbeat: &old}))
	w.waitFor("a held compute-node change", func() bool { return len(w.p.Holds()) == 1 })
	h := w.p.Holds()[0]
	if h.Cause != CauseComputeNodes || !slices.Equal(h.VMs, []string{web3, bobVM}) {
		t.Fatalf("hold = %+v, want cn2's VMs with services, web3 and bob's", h)
	}
	if st, _ := w.p.VM(web3); !slices.Equal(st.Held, []string{CauseComputeNodes}) {
		t.Errorf("VM(web3).Held = %v, want the compute-node hold", st.Held)
	}
	w.settle()
	if got := w.records(); !equalRecords(got, before) {
		t.Fatalf("records changed while the change is held")
	}
	up, now := "running", w.clock.Now().UTC().Format(time.RFC3339)
	must[mockcloud.Server](t)(w.cloud.UpdateServer(cn2, mockcloud.ServerPatch{Status: &up, LastHeartbeat: &now}))
	w.waitFor("the hold to clear", func() bool { return len(w.p.Holds()) == 0 })
	w.waitOracle(s)
	if !strings.Contains(w.logs.String(), "mass deletion no longer held") {
		t.Errorf("no log line says the hold cleared")
	}
}

func equalRecords(a, b map[string][]string) bool {
	if len(a) != len(b) {
		return false
	}
	for zone, recs := range a {
		if !slices.Equal(recs, b[zone]) {
			return false
		}
	}
	return true
}

// stoppedStrictWorld runs the rules fixture once with a guard that holds
// the removal of a single record and stops it, for a test to change the
// cloud while no cnsd runs and start it again on the same store.
func stoppedStrictWorld(t *testing.T) (*world, Settings, store.Backend) {
	s := rulesSettings()
	s.MassDeleteShare, s.MassDeleteMin = 0.05, 1
	w := newWorld(t, rulesFixture())
	b := store.NewMemory()
	w.start(s, b)
	w.waitOracle(s)
	w.stop()
	return w, s, b
}

// The scenario that deleted an enabled account's records: its account was
// disabled while no cnsd ran and a VM of another account was destroyed, so
// the re-list at start holds the removal of all of them; the account is
// enabled again and its VMs are evaluated afresh; the operator confirms.
// Only the destroyed VM may go: the hold commits what its sources are now.
func TestConfirmCommitsCurrentContributions(t *testing.T) {
	w, s, b := stoppedStrictWorld(t)
	updateUser(t, w, alice, mockcloud.UserPatch{TritonCNSEnabled: ptr("false")})
	must[mockcloud.VM](t)(w.cloud.DestroyVM(bobVM))
	w.start(s, b)
	w.waitFor("the re-list held", func() bool {
		h := w.p.Holds()
		return len(h) == 1 && len(h[0].VMs) == 5 && w.p.Idle()
	})
	updateUser(t, w, alice, mockcloud.UserPatch{TritonCNSEnabled: ptr("true")})
	w.waitFor("alice's VMs out of the hold", func() bool {
		h := w.p.Holds()
		return len(h) == 1 && slices.Equal(h[0].VMs, []string{bobVM}) && w.p.Idle()
	})
	if err := w.p.Confirm(CauseRelist); err != nil {
		t.Fatal(err)
	}
	w.waitOracle(s)
	w.waitAddrs("web.svc.alice.pub.example.com.", "192.0.2.11", "192.0.2.12", "192.0.2.13")
	if len(w.p.Holds()) != 0 {
		t.Errorf("holds after the confirm: %+v", w.p.Holds())
	}
}

// A source held for one cause and evaluated again by another bulk change
// that changes its records waits in the newer hold only, with the newer
// contribution: confirming the older hold does not commit what the source
// was. Evaluated again with the same records, it stays where it waits.
func TestSourceWaitsInOneHold(t *testing.T) {
	w, s, b := stoppedStrictWorld(t)
	must[mockcloud.VM](t)(w.cloud.SetTags(bobVM, map[string]any{"triton.cns.services": "api2"}))
	for _, id := range []string{web3, db1} {
		must[mockcloud.VM](t)(w.cloud.DestroyVM(id))
	}
	w.start(s, b)
	// The compute-node listing at start re-evaluates the VMs of every
	// node, racing the re-list: it finds the same records, so every VM
	// stays in the re-list's hold.
	w.waitFor("the re-list held", func() bool {
		h := w.p.Holds()
		return len(h) == 1 && h[0].Cause == CauseRelist && slices.Equal(h[0].VMs, sortedIDs(web3, db1, bobVM)) && w.p.Idle()
	})
	// cn2 goes down: bobVM, on cn2, loses its service records too and
	// moves to the compute-node hold.
	down, old := "unknown", w.clock.Now().Add(-2*time.Hour).UTC().Format(time.RFC3339)
	must[mockcloud.Server](t)(w.cloud.UpdateServer(cn2, mockcloud.ServerPatch{Status: &down, LastHeartbeat: &old}))
	w.waitFor("bobVM in the compute-node hold", func() bool {
		for _, h := range w.p.Holds() {
			if h.Cause == CauseComputeNodes && slices.Contains(h.VMs, bobVM) {
				return w.p.Idle()
			}
		}
		return false
	})
	for _, h := range w.p.Holds() {
		if h.Cause == CauseRelist && slices.Contains(h.VMs, bobVM) {
			t.Errorf("bobVM waits in the re-list hold too: %+v", h)
		}
	}
	// bobVM changed again settles it: out of every hold, committed.
	must[mockcloud.VM](t)(w.cloud.SetTags(bobVM, map[string]any{"triton.cns.services": "api"}))
	up, now := "running", w.clock.Now().UTC().Format(time.RFC3339)
	must[mockcloud.Server](t)(w.cloud.UpdateServer(cn2, mockcloud.ServerPatch{Status: &up, LastHeartbeat: &now}))
	w.waitFor("only the re-list held", func() bool {
		h := w.p.Holds()
		return len(h) == 1 && h[0].Cause == CauseRelist && slices.Equal(h[0].VMs, sortedIDs(web3, db1)) && w.p.Idle()
	})
	if err := w.p.Confirm(CauseRelist); err != nil {
		t.Fatal(err)
	}
	w.waitOracle(s)
	w.waitAddrs("api.svc.bob.pub.example.com.", "192.0.2.15")
}

func sortedIDs(ids ...string) []string {
	slices.Sort(ids)
	return ids
}
