package feed

import (
	"encoding/json"
	"math/bits"
	"net/http"
	"net/http/httptest"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cnsd/cnsd/mockcloud"
	"github.com/cnsd/cnsd/zonegen"
	"github.com/gorilla/websocket"
)

func TestVMAPIBootstrapListing(t *testing.T) {
	c := newVMCloud(40)
	sink, _ := startVMAPI(t, c.Handler(), nil)
	vmWaitFor(t, "the first listing", func() bool { return sink.numListings() > 0 })
	l := sink.lastListing()
	want := activeUUIDs(c)
	if got := listedUUIDs(l); !slices.Equal(got, want) {
		t.Errorf("listed %d VMs %v,\nwant the fixture's %d active ones %v", len(got), got, len(want), want)
	}
	if len(l.Unreadable) != 0 {
		t.Errorf("unreadable %v, want none", l.Unreadable)
	}
	for _, vm := range l.VMs {
		mv, _ := c.VM(vm.UUID)
		if vm.Alias != mv.Alias || vm.OwnerUUID != mv.OwnerUUID || vm.State != mv.State || len(vm.NICs) != len(mv.NICs) {
			t.Errorf("vm %s listed as %+v, the cloud has %+v", vm.UUID, vm, mv)
		}
	}
}

func TestVMAPIChanges(t *testing.T) {
	c := newVMCloud(20)
	sink, _ := startVMAPI(t, c.Handler(), nil)
	vmWaitFor(t, "the first listing", func() bool { return sink.numListings() > 0 })
	active := activeUUIDs(c)
	tagged, doomed := active[0], active[1]
	tags := map[string]any{"triton.cns.services": "web:8080"}
	if _, err := c.SetTags(tagged, tags); err != nil {
		t.Fatal(err)
	}
	vmWaitFor(t, "Changed with the new tags", func() bool {
		return sink.changedMatch(func(vm zonegen.VM) bool {
			return vm.UUID == tagged && reflect.DeepEqual(vm.Tags, tags)
		})
	})
	if _, err := c.DestroyVM(doomed); err != nil {
		t.Fatal(err)
	}
	vmWaitFor(t, "Gone of the destroyed VM", func() bool { return sink.isGone(doomed) })
	nv := mockcloud.VM{UUID: "f0000000-0000-4000-8000-000000000001", OwnerUUID: "o", Alias: "new0",
		NICs: []mockcloud.NIC{{MAC: "90:b8:d0:ff:00:01", IP: "10.88.9.9", IPs: []string{"10.88.9.9/16"}, NICTag: "external"}}}
	if _, err := c.CreateVM(nv); err != nil {
		t.Fatal(err)
	}
	vmWaitFor(t, "Changed of the created VM", func() bool {
		return sink.changedMatch(func(vm zonegen.VM) bool {
			return vm.UUID == nv.UUID && vm.Alias == "new0" && len(vm.NICs) == 1 && vm.NICs[0].IP == "10.88.9.9"
		})
	})
	if n := sink.numListings(); n != 1 {
		t.Errorf("%d listings, want 1: the feed never broke", n)
	}
}

func TestVMAPIReconnectsAfterCut(t *testing.T) {
	c := newVMCloud(20)
	sink, logs := startVMAPI(t, c.Handler(), nil)
	vmWaitFor(t, "the first listing", func() bool { return sink.numListings() > 0 })
	doomed := activeUUIDs(c)[0]
	c.DisconnectAll()
	if _, err := c.DestroyVM(doomed); err != nil {
		t.Fatal(err)
	}
	vmWaitFor(t, "a listing after the reconnect", func() bool { return sink.numListings() > 1 })
	vmWaitFor(t, "the destroyed VM out of the listing or gone", func() bool {
		return !slices.Contains(listedUUIDs(sink.lastListing()), doomed) || sink.isGone(doomed)
	})
	if len(logs.Lines("changefeed session ended")) == 0 {
		t.Errorf("no log line about the lost connection in:\n%s", logs)
	}
}

// TestVMAPITakeover: another connection registering the same instance
// takes the feed over and the follower's connection goes quiet (pongs
// still come). Item silence makes the follower reconnect, take the feed
// back and re-list, so a change made after the takeover reaches it.
func TestVMAPITakeover(t *testing.T) {
	c := newVMCloud(20)
	srv := httptest.NewServer(c.Handler())
	t.Cleanup(srv.Close)
	sink, logs := startVMAPI(t, c.Handler(), func(cfg *VMAPIConfig) {
		cfg.URL = srv.URL
		cfg.ItemSilence = 300 * time.Millisecond
	})
	vmWaitFor(t, "the first listing", func() bool { return sink.numListings() > 0 })
	thief := registerChangefeed(t, srv.URL, vmapiTestConfig("").Instance)
	defer thief.Close()
	uuid := activeUUIDs(c)[0]
	tags := map[string]any{"after": "takeover"}
	if _, err := c.SetTags(uuid, tags); err != nil {
		t.Fatal(err)
	}
	vmWaitFor(t, "the change made after the takeover", func() bool {
		if sink.changedMatch(func(vm zonegen.VM) bool { return vm.UUID == uuid && reflect.DeepEqual(vm.Tags, tags) }) {
			return true
		}
		l := sink.lastListing()
		i := slices.IndexFunc(l.VMs, func(vm zonegen.VM) bool { return vm.UUID == uuid })
		return i >= 0 && reflect.DeepEqual(l.VMs[i].Tags, tags)
	})
	if len(logs.Lines("taken over")) == 0 {
		t.Errorf("no log line about a takeover in:\n%s", logs)
	}
}

// registerChangefeed registers instance on the changefeed at base and reads the
// bootstrap frame.
func registerChangefeed(t *testing.T, base, instance string) *websocket.Conn {
	t.Helper()
	ws, _, err := websocket.DefaultDialer.Dial("ws"+strings.TrimPrefix(base, "http")+"/changefeeds",
		http.Header{"Accept-Version": {"~1"}})
	if err != nil {
		t.Fatal(err)
	}
	reg := `{"instance":"` + instance + `","service":"thief","changeKind":{"resource":"vm","subResources":["tags"]}}`
	if err := ws.WriteMessage(websocket.TextMessage, []byte(reg)); err != nil {
		t.Fatal(err)
	}
	if _, _, err := ws.ReadMessage(); err != nil {
		t.Fatal(err)
	}
	return ws
}

// TestVMAPIFetchErrors: failed GETs of /vms/{uuid} — 500s, and answers
// cut off half-way through their body — are tried again for as long as
// they fail, with fewer log lines as they go on, and the change is
// delivered once VMAPI answers; other changes flow meanwhile.
func TestVMAPIFetchErrors(t *testing.T) {
	c := newVMCloud(20)
	active := activeUUIDs(c)
	flaky, broken, cut, fine := active[0], active[1], active[2], active[3]
	const brokenFails = 9 // more than the four tries a change once had
	var flakyFails, brokenTries, cutFails atomic.Int32
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		id := strings.TrimPrefix(r.URL.Path, "/vms/")
		switch {
		case id == broken && brokenTries.Add(1) <= brokenFails, id == flaky && flakyFails.Add(1) <= 2:
			http.Error(w, `{"code":"InternalError","message":"injected"}`, http.StatusInternalServerError)
			return
		case id == cut && cutFails.Add(1) <= 2:
			rec := httptest.NewRecorder()
			c.Handler().ServeHTTP(rec, r)
			w.Header().Set("Content-Length", strconv.Itoa(rec.Body.Len()))
			w.WriteHeader(rec.Code)
			_, _ = w.Write(rec.Body.Bytes()[:rec.Body.Len()/2])
			w.(http.Flusher).Flush()
			panic(http.ErrAbortHandler)
		}
		c.Handler().ServeHTTP(w, r)
	})
	sink, logs := startVMAPI(t, h, nil)
	vmWaitFor(t, "the first listing", func() bool { return sink.numListings() > 0 })
	for _, id := range []string{flaky, broken, cut, fine} {
		if _, err := c.SetAlias(id, "renamed"); err != nil {
			t.Fatal(err)
		}
	}
	for _, id := range []string{flaky, broken, cut, fine} {
		vmWaitFor(t, "Changed of "+id, func() bool {
			return sink.changedMatch(func(vm zonegen.VM) bool { return vm.UUID == id && vm.Alias == "renamed" })
		})
	}
	if got := logs.Lines("vm change skipped"); len(got) != 0 {
		t.Errorf("changes skipped: %q", got)
	}
	// Thirteen failures, fewer lines; the 8th try of broken, failing
	// alone by then, is one of them.
	if got := logs.Lines("trying again"); len(got) == 0 || len(got) >= brokenFails+4 || len(logs.Lines("trying again", broken, "attempt=8")) != 1 {
		t.Errorf("%d lines for %d failed fetches, want fewer, one of them the 8th try of %s:\n%q", len(got), brokenFails+4, broken, got)
	}
	if len(logs.Lines("vm fetches succeed again")) == 0 {
		t.Errorf("no line saying fetches succeed again in:\n%s", logs)
	}
}

// TestVMAPIFetchOutage: while VMAPI fails every GET /vms/{uuid}, the
// changed VMs are tried again until it is back, and the failures are
// logged a few lines in all, not one line per VM.
func TestVMAPIFetchOutage(t *testing.T) {
	const changed = 24
	c := newVMCloud(changed + 6)
	active := activeUUIDs(c)[:changed]
	var down atomic.Bool
	var failures atomic.Int32
	down.Store(true)
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.HasPrefix(r.URL.Path, "/vms/") && down.Load() {
			failures.Add(1)
			http.Error(w, `{"code":"ServiceUnavailableError","message":"injected"}`, http.StatusServiceUnavailable)
			return
		}
		c.Handler().ServeHTTP(w, r)
	})
	sink, logs := startVMAPI(t, h, nil)
	vmWaitFor(t, "the first listing", func() bool { return sink.numListings() > 0 })
	for _, id := range active {
		if _, err := c.SetAlias(id, "renamed"); err != nil {
			t.Fatal(err)
		}
	}
	vmWaitFor(t, "three failed fetches per VM", func() bool { return failures.Load() >= 3*changed })
	down.Store(false)
	for _, id := range active {
		vmWaitFor(t, "Changed of "+id, func() bool {
			return sink.changedMatch(func(vm zonegen.VM) bool { return vm.UUID == id && vm.Alias == "renamed" })
		})
	}
	// The 1st, 2nd, 4th, … failure of the outage: log2 of them and one.
	n := int(failures.Load())
	if got, most := len(logs.Lines("trying again")), bits.Len(uint(n)); got == 0 || got > most {
		t.Errorf("%d lines for %d failed fetches of %d VMs, want 1 to %d:\n%q", got, n, changed, most, logs.Lines("trying again"))
	}
	if got := logs.Lines("vm fetches succeed again", "failures="); len(got) == 0 {
		t.Errorf("no line saying fetches succeed again in:\n%s", logs)
	}
}

// TestVMAPIFetchOutageLateFailure: a fetch asked during an outage that
// fails only after another fetch has succeeded (the outage over) belongs
// to that outage: it is tried again, but not logged as the first
// failure of another.
func TestVMAPIFetchOutageLateFailure(t *testing.T) {
	c := newVMCloud(8)
	active := activeUUIDs(c)
	slow, quick := active[0], active[1]
	var down, slowHeld atomic.Bool
	down.Store(true)
	slowAsked := make(chan struct{}) // closed when slow's late fetch is asked
	recovered := make(chan struct{}) // closed once quick's success is logged
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch {
		case strings.HasPrefix(r.URL.Path, "/vms/") && down.Load():
			http.Error(w, `{"code":"ServiceUnavailableError","message":"injected"}`, http.StatusServiceUnavailable)
			return
		case r.URL.Path == "/vms/"+slow && slowHeld.CompareAndSwap(false, true):
			// Asked before quick's fetch succeeds, answered with the
			// outage's error after it.
			close(slowAsked)
			<-recovered
			http.Error(w, `{"code":"ServiceUnavailableError","message":"injected"}`, http.StatusServiceUnavailable)
			return
		case r.URL.Path == "/vms/"+quick:
			<-slowAsked
		}
		c.Handler().ServeHTTP(w, r)
	})
	sink, logs := startVMAPI(t, h, nil)
	vmWaitFor(t, "the first listing", func() bool { return sink.numListings() > 0 })
	for _, id := range []string{slow, quick} {
		if _, err := c.SetAlias(id, "renamed"); err != nil {
			t.Fatal(err)
		}
	}
	vmWaitFor(t, "both VMs failing", func() bool { return len(logs.Lines("trying again", "vms_waiting=2")) > 0 })
	down.Store(false)
	vmWaitFor(t, "fetches succeeding again", func() bool { return len(logs.Lines("vm fetches succeed again")) > 0 })
	close(recovered)
	for _, id := range []string{slow, quick} {
		vmWaitFor(t, "Changed of "+id, func() bool {
			return sink.changedMatch(func(vm zonegen.VM) bool { return vm.UUID == id && vm.Alias == "renamed" })
		})
	}
	if !slowHeld.Load() {
		t.Fatal("the slow VM's late failure never happened")
	}
	if got := logs.Lines("trying again", "failures=1 "); len(got) != 1 {
		t.Errorf("%d lines of a first failure, want 1 (the outage's; the late failure is not another's):\n%s", len(got), logs)
	}
}

// TestVMAPIMalformedVMInPage: a VM the listing cannot read is logged by
// uuid, reported unreadable (so its previous state stays), and the rest
// of the listing is delivered.
func TestVMAPIMalformedVMInPage(t *testing.T) {
	c := newVMCloud(30)
	active := activeUUIDs(c)
	bad := active[len(active)/2]
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/vms" {
			c.Handler().ServeHTTP(w, r)
			return
		}
		rec := httptest.NewRecorder()
		c.Handler().ServeHTTP(rec, r)
		var page []map[string]any
		if err := json.Unmarshal(rec.Body.Bytes(), &page); err != nil {
			t.Errorf("mockcloud page: %v", err)
		}
		for _, v := range page {
			if v["uuid"] == bad {
				v["tags"] = "not an object"
			}
		}
		b, _ := json.Marshal(page)
		w.Write(b)
	})
	sink, logs := startVMAPI(t, h, nil)
	vmWaitFor(t, "the first listing", func() bool { return sink.numListings() > 0 })
	l := sink.lastListing()
	want := slices.DeleteFunc(slices.Clone(active), func(s string) bool { return s == bad })
	if got := listedUUIDs(l); !slices.Equal(got, want) {
		t.Errorf("listed %v,\nwant every active VM but %s: %v", got, bad, want)
	}
	if !slices.Equal(l.Unreadable, []string{bad}) {
		t.Errorf("unreadable %v, want [%s]", l.Unreadable, bad)
	}
	if len(logs.Lines("malformed vm in listing skipped", "vm="+bad)) == 0 {
		t.Errorf("no log line naming %s in:\n%s", bad, logs)
	}
}
