package pipeline

import (
	"context"
	"fmt"
	"reflect"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/cnsd/cnsd/feed"
	"github.com/cnsd/cnsd/mockcloud"
	"github.com/cnsd/cnsd/store"
	"github.com/cnsd/cnsd/zonegen"
)

// stageCloud is a varied cloud in memory: the generated fixture with
// accounts disabled or missing, compute nodes down or unknown, VMs
// stopped, self-removed or with a NIC to repair.
type stageCloud struct {
	*feed.Static
	vms      []zonegen.VM
	accounts map[string]zonegen.Account
	servers  []zonegen.Server
	pool     string
}

func newStageCloud(t *testing.T) *stageCloud {
	t.Helper()
	f := mockcloud.Generate(mockcloud.GenOptions{VMs: 1500, Accounts: 20, Servers: 8, Seed: 18})
	c := &stageCloud{Static: feed.NewStatic(), accounts: map[string]zonegen.Account{}, pool: f.NetworkPools[0].UUID}
	for i, u := range f.Users {
		a := zonegen.Account{UUID: u.UUID, Login: u.Login, TritonCNSEnabled: zonegen.FlagString(u.TritonCNSEnabled),
			ApprovedForProvisioning: zonegen.FlagString(u.ApprovedForProvisioning)}
		switch i % 7 {
		case 3:
			a.TritonCNSEnabled = "false"
		case 5:
			continue // UFDS knows no such account
		}
		c.accounts[a.UUID] = a
		c.AddAccount(a)
	}
	for i, sv := range f.Servers {
		s := zonegen.Server{UUID: sv.UUID, Hostname: sv.Hostname, Status: sv.Status, Setup: sv.Setup,
			LastBoot: parseTime(sv.LastBoot), LastHeartbeat: parseTime(sv.LastHeartbeat)}
		switch i {
		case 2:
			s.Status, s.LastHeartbeat = "unknown", s.LastHeartbeat.Add(-time.Hour)
		case 5:
			continue // CNAPI does not know it
		}
		c.servers = append(c.servers, s)
		c.AddServer(s)
	}
	for _, n := range f.Networks {
		net := zonegen.Network{UUID: n.UUID, Name: n.Name, OwnerUUIDs: n.OwnerUUIDs}
		for _, p := range f.NetworkPools {
			if slices.Contains(p.Networks, n.UUID) {
				net.Pools = append(net.Pools, p.UUID)
			}
		}
		c.AddNetwork(net)
	}
	for i, mv := range f.VMs {
		vm := toVM(t, mv)
		switch i % 23 {
		case 4:
			vm.State = "stopped"
		case 9:
			vm.CustomerMetadata = map[string]string{zonegen.MetaStatus: "down"}
		case 13:
			if len(vm.NICs) > 0 {
				vm.NICs = slices.Clone(vm.NICs)
				vm.NICs[0].NetworkUUID = "" // to repair: NAPI knows nothing of it
			}
		}
		c.vms = append(c.vms, vm)
	}
	return c
}

func stageSettings(c *stageCloud) Settings {
	return Settings{Naming: zonegen.Config{UseAlias: true, UseLogin: true, Zones: []zonegen.ZoneConfig{
		{Name: "pub.example.com", Networks: []string{c.pool}},
		{Name: "dc1.cns.example.com", Networks: []string{"*"}},
	}}}
}

// stagePair is a varied cloud and two pipelines over it at a stopped
// clock: one to be given listings whole, one page by page.
func stagePair(t *testing.T) (c *stageCloud, s Settings, now time.Time, whole, paged *Pipeline) {
	c = newStageCloud(t)
	s, now = stageSettings(c), time.Now()
	return c, s, now, stageRun(t, c, c, c, s, now), stageRun(t, c, c, c, s, now)
}

// stageRun runs a pipeline over the cloud with a memory store at a
// stopped clock until the test ends.
func stageRun(t *testing.T, o Owners, sv Servers, n Networks, s Settings, now time.Time) *Pipeline {
	t.Helper()
	return stageRunClock(t, o, sv, n, s, func() time.Time { return now })
}

func stageRunClock(t *testing.T, o Owners, sv Servers, n Networks, s Settings, clock func() time.Time) *Pipeline {
	t.Helper()
	st, err := store.Open(context.Background(), store.NewMemory(), store.Options{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	p := New(Config{Store: st, Owners: o, Servers: sv, Networks: n, Settings: s,
		RetryInterval: time.Hour, Clock: clock})
	runUntilCleanup(t, p)
	return p
}

// runUntilCleanup runs p until the test ends.
func runUntilCleanup(t *testing.T, p *Pipeline) {
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { p.Run(ctx); close(done) }()
	t.Cleanup(func() { cancel(); <-done })
}

func waitIdle(t *testing.T, p *Pipeline) {
	t.Helper()
	deadline := time.Now().Add(waitLimit)
	for !p.Idle() {
		if time.Now().After(deadline) {
			t.Fatal("timed out waiting for the pipeline to be idle")
		}
		time.Sleep(2 * time.Millisecond)
	}
}

// pipelineState is what a pipeline published and decided: the store's
// records by zone, every VM's decision and notes, the holds.
type pipelineState struct {
	records   map[string][]string
	decisions map[string]zonegen.Decision
	notes     map[string][]zonegen.Reason
	retry     []string
	holds     []Hold
}

func stateOf(t *testing.T, p *Pipeline) pipelineState {
	t.Helper()
	waitIdle(t, p)
	s := pipelineState{records: map[string][]string{}, decisions: map[string]zonegen.Decision{},
		notes: map[string][]zonegen.Reason{}}
	for _, zone := range p.cfg.Store.Zones() {
		for r := range p.cfg.Store.Snapshot(zone).All() {
			s.records[zone] = append(s.records[zone], r.Source+" "+r.String())
		}
		slices.Sort(s.records[zone])
	}
	for _, h := range p.Holds() {
		h.Since = time.Time{}
		s.holds = append(s.holds, h)
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	for id, st := range p.vms {
		s.decisions[id], s.notes[id] = st.decision, st.notes
		if p.retry[id] {
			s.retry = append(s.retry, id)
		}
	}
	slices.Sort(s.retry)
	return s
}

func (s pipelineState) diff(t *testing.T, want pipelineState) {
	t.Helper()
	if !reflect.DeepEqual(s.records, want.records) {
		n := 0
		for zone := range want.records {
			if !slices.Equal(s.records[zone], want.records[zone]) {
				n++
				if n < 4 {
					t.Errorf("zone %s: %d records, want %d", zone, len(s.records[zone]), len(want.records[zone]))
				}
			}
		}
		t.Errorf("records differ in %d zones of %d (%d here)", n, len(want.records), len(s.records))
	}
	if !reflect.DeepEqual(s.decisions, want.decisions) || !reflect.DeepEqual(s.notes, want.notes) {
		for id, d := range want.decisions {
			if !reflect.DeepEqual(s.decisions[id], d) {
				t.Errorf("vm %s: decision %+v, want %+v", id, s.decisions[id], d)
				break
			}
		}
		t.Errorf("decisions differ (%d VMs, want %d)", len(s.decisions), len(want.decisions))
	}
	if !slices.Equal(s.retry, want.retry) {
		t.Errorf("retrying %v, want %v", s.retry, want.retry)
	}
	if !reflect.DeepEqual(s.holds, want.holds) {
		t.Errorf("holds %+v, want %+v", s.holds, want.holds)
	}
}

// listingOf is the listing of vms and the pages of size n it comes in.
func listingOf(vms []zonegen.VM, n int) (feed.VMListing, [][]zonegen.VM) {
	var pages [][]zonegen.VM
	for start := 0; start < len(vms); start += n {
		pages = append(pages, vms[start:min(start+n, len(vms)):min(start+n, len(vms))])
	}
	return feed.VMListing{VMs: slices.Clone(vms)}, pages
}

// sendPages delivers pages from..to-1 and waits for them to be prepared.
func sendPages(t *testing.T, p *Pipeline, pages [][]zonegen.VM, from, to int) {
	t.Helper()
	for i := from; i < to; i++ {
		p.ListingPage(i, pages[i])
	}
	deadline := time.Now().Add(waitLimit)
	for {
		p.stage.mu.Lock()
		done := p.stage.cur == nil || p.stage.cur.prepared >= to
		p.stage.mu.Unlock()
		if done {
			return
		}
		if time.Now().After(deadline) {
			t.Fatal("timed out waiting for the pages to be prepared")
		}
		time.Sleep(time.Millisecond)
	}
}

// TestStagedListingExact: a listing whose pages were staged while it was
// listed gives exactly what evaluating the complete listing gives, on a
// varied cloud, for a first listing and for one that damps self-removals
// and drops VMs.
func TestStagedListingExact(t *testing.T) {
	c, s, now, whole, paged := stagePair(t)

	l, pages := listingOf(c.vms, 100)
	whole.Listing(l)
	sendPages(t, paged, pages, 0, len(pages))
	paged.Listing(l)
	want := stateOf(t, whole)
	stateOf(t, paged).diff(t, want)
	if len(want.retry) == 0 || len(want.records) < 3 {
		t.Fatalf("the cloud is not varied enough: %d retrying, %d zones", len(want.retry), len(want.records))
	}
	if paged.lastReused < len(c.vms)/2 {
		t.Errorf("%d staged outcomes used of %d VMs", paged.lastReused, len(c.vms))
	}

	// The listing applied while its last pages are not prepared: they
	// are evaluated then.
	again := stageRun(t, c, c, c, s, now)
	for i := range pages {
		again.ListingPage(i, pages[i])
	}
	again.Listing(l)
	stateOf(t, again).diff(t, want)

	// The second listing: a tenth of the VMs ask to be removed from
	// their services (damped: the tracker holds them), a few are gone.
	vms := slices.Clone(c.vms)
	for i := range vms {
		if i%10 == 1 {
			vms[i].CustomerMetadata = map[string]string{zonegen.MetaStatus: "down"}
		}
	}
	vms = slices.DeleteFunc(vms, func(vm zonegen.VM) bool { return vm.UUID[0] == '7' })
	l, pages = listingOf(vms, 100)
	whole.Listing(l)
	sendPages(t, paged, pages, 0, len(pages))
	paged.Listing(l)
	want = stateOf(t, whole)
	stateOf(t, paged).diff(t, want)
	held := 0
	for _, d := range want.decisions {
		if hasReason(d.Reasons, zonegen.ReasonHysteresisHolds) {
			held++
		}
	}
	if held == 0 {
		t.Fatal("no self-removal damped: the test does not exercise the damping")
	}
}

// TestStagedListingInterrupted: the pages of a listing that fails leave
// no trace, nothing committed and nothing removed, and a listing started
// again (a reconnect) starts from nothing staged.
func TestStagedListingInterrupted(t *testing.T) {
	c, _, _, whole, paged := stagePair(t)

	// Cut before anything was listed: nothing at all.
	l, pages := listingOf(c.vms, 100)
	sendPages(t, paged, pages, 0, 5)
	paged.ListingAbandoned()
	empty := stateOf(t, paged)
	if len(empty.records) != 0 || len(empty.decisions) != 0 {
		t.Fatalf("an abandoned listing left %d zones, %d VMs", len(empty.records), len(empty.decisions))
	}

	whole.Listing(l)
	sendPages(t, paged, pages, 0, len(pages))
	paged.Listing(l)
	before := stateOf(t, whole)
	stateOf(t, paged).diff(t, before)

	// A listing that would remove most VMs, cut at page 3: nothing is
	// removed or changed.
	short := slices.Clone(c.vms[:400])
	for i := range short {
		short[i].Alias += "x"
	}
	_, shortPages := listingOf(short, 100)
	sendPages(t, paged, shortPages, 0, 3)
	paged.ListingAbandoned()
	stateOf(t, paged).diff(t, before)

	// Cut without a word, then listed again from page 0 (reconnect),
	// with other VMs: only the second listing counts.
	sendPages(t, paged, shortPages, 0, 3)
	vms := slices.Clone(c.vms[200:])
	l, pages = listingOf(vms, 100)
	whole.Listing(l)
	sendPages(t, paged, pages, 0, len(pages))
	paged.Listing(l)
	stateOf(t, paged).diff(t, stateOf(t, whole))

	// A page out of order drops the staging; the listing is still
	// applied whole.
	sendPages(t, paged, pages, 0, 2)
	paged.ListingPage(5, pages[5])
	paged.Listing(l)
	whole.Listing(l)
	stateOf(t, paged).diff(t, stateOf(t, whole))
}

// mutableCloud wraps a stageCloud so that an account or a compute node
// can change while pages are staged.
type mutableCloud struct {
	*stageCloud
	mu       sync.Mutex
	accounts map[string]zonegen.Account
	servers  map[string]zonegen.Server
}

func newMutableCloud(c *stageCloud) *mutableCloud {
	m := &mutableCloud{stageCloud: c, accounts: map[string]zonegen.Account{}, servers: map[string]zonegen.Server{}}
	for id, a := range c.accounts {
		m.accounts[id] = a
	}
	for _, s := range c.servers {
		m.servers[s.UUID] = s
	}
	return m
}

func (m *mutableCloud) User(_ context.Context, uuid string) (zonegen.Account, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	a, ok := m.accounts[uuid]
	if !ok {
		return zonegen.Account{}, fmt.Errorf("%w: %s", feed.ErrNoAccount, uuid)
	}
	return a, nil
}

func (m *mutableCloud) Server(uuid string) (zonegen.Server, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	s, ok := m.servers[uuid]
	return s, ok
}

// TestStagedListingInvalidated: an account, a compute node or the
// settings changing while the listing is staged count as they do when
// the complete listing is evaluated after them (the queue's order: the
// change first), and a compute node's verdict that moves with the clock
// is decided at the listing's time.
func TestStagedListingInvalidated(t *testing.T) {
	base := newStageCloud(t)
	s := stageSettings(base)
	owner, server := base.vms[0].OwnerUUID, base.vms[1].ServerUUID
	for _, tc := range []struct {
		name   string
		change func(m *mutableCloud, p *Pipeline)
	}{
		{"account disabled", func(m *mutableCloud, p *Pipeline) {
			m.mu.Lock()
			a := m.accounts[owner]
			a.TritonCNSEnabled = "false"
			m.accounts[owner] = a
			m.mu.Unlock()
			p.AccountChanged(owner)
		}},
		{"compute node down", func(m *mutableCloud, p *Pipeline) {
			m.mu.Lock()
			sv := m.servers[server]
			sv.Status, sv.LastHeartbeat = "unknown", sv.LastHeartbeat.Add(-time.Hour)
			m.servers[server] = sv
			m.mu.Unlock()
			p.ServersChanged([]zonegen.Server{sv})
		}},
		{"compute node changed unannounced", func(m *mutableCloud, p *Pipeline) {
			m.mu.Lock()
			sv := m.servers[server]
			sv.Setup = false
			m.servers[server] = sv
			m.mu.Unlock()
		}},
		{"settings", func(m *mutableCloud, p *Pipeline) {
			s2 := s
			s2.Naming.UseLogin = false
			p.SetSettings(s2)
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			now := time.Now()
			mw, mp := newMutableCloud(base), newMutableCloud(base)
			whole := stageRun(t, mw, mw, mw, s, now)
			paged := stageRun(t, mp, mp, mp, s, now)
			l, pages := listingOf(base.vms, 100)
			sendPages(t, paged, pages, 0, 8)
			tc.change(mw, whole)
			tc.change(mp, paged)
			sendPages(t, paged, pages, 8, len(pages))
			whole.Listing(l)
			paged.Listing(l)
			stateOf(t, paged).diff(t, stateOf(t, whole))
		})
	}

	// The clock moves while the pages are staged: a compute node whose
	// boot grace ends meanwhile is decided at the listing's time.
	t.Run("clock", func(t *testing.T) {
		c := newMutableCloud(base)
		var mu sync.Mutex
		now := time.Now()
		clock := func() time.Time { mu.Lock(); defer mu.Unlock(); return now }
		sv := c.servers[server]
		sv.LastBoot = now.Add(-zonegen.DefaultDecideOptions().BootGrace + time.Minute)
		c.servers[server] = sv
		paged := stageRunClock(t, c, c, c, s, clock)
		l, pages := listingOf(base.vms, 100)
		sendPages(t, paged, pages, 0, len(pages))
		mu.Lock()
		now = now.Add(2 * time.Minute)
		mu.Unlock()
		paged.Listing(l)
		got := stateOf(t, paged)
		whole := stageRun(t, c, c, c, s, now)
		whole.Listing(l)
		got.diff(t, stateOf(t, whole))
	})
}

// TestStagedListingGuard: a staged listing that would remove most of a
// zone is held as a whole by the mass-deletion guard.
func TestStagedListingGuard(t *testing.T) {
	c := newStageCloud(t)
	s := stageSettings(c)
	now := time.Now()
	paged := stageRun(t, c, c, c, s, now)
	l, pages := listingOf(c.vms, 100)
	sendPages(t, paged, pages, 0, len(pages))
	paged.Listing(l)
	before := stateOf(t, paged)
	l, pages = listingOf(c.vms[:300], 100)
	sendPages(t, paged, pages, 0, len(pages))
	paged.Listing(l)
	after := stateOf(t, paged)
	if len(after.holds) != 1 || after.holds[0].Cause != CauseRelist {
		t.Fatalf("holds %+v, want one re-list hold", after.holds)
	}
	if !reflect.DeepEqual(after.records, before.records) {
		t.Errorf("records changed while the mass deletion is held")
	}
}

// TestStagedPrefetchOutage: while UFDS is down, the pages of a listing
// ask it no more than warm has in flight at once, however many pages
// there are, and the listing resolves the VMs of cached owners.
func TestStagedPrefetchOutage(t *testing.T) {
	vms := warmVMs()
	owners := halfCachedOwnersDown(vms)
	p := warmPipeline(t, owners, &countingNetworks{asked: map[string]int{}})
	runUntilCleanup(t, p)
	l, pages := listingOf(vms, 20)
	sendPages(t, p, pages, 0, len(pages))
	p.Listing(l)
	got := stateOf(t, p)
	if n := owners.total(); n < 1 || n > warmParallel {
		t.Errorf("UFDS asked %d times over %d pages while down, want 1 to %d", n, len(pages), warmParallel)
	}
	if n := len(got.decisions) - len(got.retry); n != 100 && n != 96 {
		t.Errorf("%d VMs resolved, want the 100 of cached owners (96 if the failure recorded is one)", n)
	}
}
