package xfr

import (
	"context"
	"net/netip"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/cnsd/cnsd/schema"
	"github.com/cnsd/cnsd/store"
)

// tracker follows the secondaries: it sends them NOTIFY after each new
// serial, polls their SOA until they serve it, and keeps what it learnt
// for the API. Secondaries are the configured peers (host names resolved
// periodically) and, with learn_peers, addresses that transfer a zone
// again and again (learn.go).
type tracker struct {
	s    *Server
	kick chan struct{} // the configuration changed
	// serving are the addresses of the server's UDP sockets, set before
	// run starts: where NOTIFY goes out from (see source).
	serving []netip.Addr

	mu       sync.Mutex
	resolved map[string][]netip.Addr                    // lower-case host name → its addresses
	learnt   map[netip.Addr]map[string]*transferHistory // by address and zone
	peers    map[netip.AddrPort]*peer
	raising  map[string]bool // zones whose serial is being raised (ahead.go)
	ctx      context.Context // the run's, for the workers it starts
}

// peer is one secondary as NOTIFY reaches it.
type peer struct {
	addr    netip.AddrPort
	version string
	asked   bool // version.bind was asked
	zones   map[string]*peerZone
}

// peerZone is what is known of one zone on one secondary. want is the
// serial it should reach, notified the last serial sent to it; running
// says a worker is busy with it.
type peerZone struct {
	want, notified, confirmed uint32
	wantSince, confirmedAt    time.Time
	lastNotify                time.Time
	// resendAfter is how long after lastNotify the NOTIFY goes again
	// while the secondary is behind; it doubles with each resend.
	resendAfter              time.Duration
	axfr, ixfr               uint64
	notifySent, notifyFailed uint64
	// refusedSince is when the NOTIFYs answered with an error rcode
	// since the last one answered otherwise began; zero when the last
	// was not refused.
	refusedSince   time.Time
	stale, running bool
	// learnt: the secondary is no configured peer of the zone but was
	// learnt from its transfers. It never holds the journal and is
	// never reported stale: nobody promised it would keep up.
	learnt bool
	// wake interrupts the worker's wait between polls when a newer
	// serial is wanted, so that its NOTIFY goes out at once.
	wake chan struct{}
	// ahead is the secondary serving a serial ahead of the zone's.
	ahead aheadState
	// fetched is the serial of its last transfer of the zone, accepted
	// says it answered the last NOTIFY without error. unpolled: it
	// refuses SOA queries for the zone although it takes the zone's
	// NOTIFY or transfers it (Knot does not serve a catalog zone it
	// interprets); it is polled no more, and confirmed by what it does
	// (unpolled.go). refresh is the serial its SOA queries to this
	// server were answered, first at refreshAt, with no transfer since.
	fetched, refresh   uint32
	refreshAt          time.Time
	accepted, unpolled bool
}

func newTracker(s *Server) *tracker {
	return &tracker{s: s, kick: make(chan struct{}, 1), resolved: map[string][]netip.Addr{},
		learnt: map[netip.Addr]map[string]*transferHistory{}, peers: map[netip.AddrPort]*peer{}, raising: map[string]bool{}}
}

func (t *tracker) configChanged() {
	select {
	case t.kick <- struct{}{}:
	default:
	}
}

// run NOTIFYs secondaries of every zone whose serial changes, until ctx
// ends.
func (t *tracker) run(ctx context.Context) error {
	t.mu.Lock()
	t.ctx = ctx
	t.mu.Unlock()
	// Watch before the first round, so that no change falls between.
	changed := t.s.src.Watch()
	if u, ok := t.s.src.(interface{ Unwatch(<-chan struct{}) }); ok {
		defer u.Unwatch(changed)
	}
	t.resolve(ctx)
	resolveTick := time.NewTicker(t.s.opts.ResolveInterval)
	defer resolveTick.Stop()
	for {
		t.round()
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-changed:
		case <-t.kick:
			t.resolve(ctx)
		case <-resolveTick.C:
			t.resolve(ctx)
		}
	}
}

// round brings every secondary's wanted serial up to its zones' current
// ones and starts a worker wherever a NOTIFY is due. A secondary that is
// no longer a target of a zone (taken out of the configuration, or the
// zone is no longer served) is forgotten for that zone, which ends its
// worker.
func (t *tracker) round() {
	st := t.s.settings()
	now := t.s.opts.Clock()
	targeted := map[netip.AddrPort]map[string]bool{}
	for _, z := range st.served(t.s.src) {
		if z.snap == nil {
			continue
		}
		serial := z.serial()
		all, learnt := t.targets(st, z, now)
		for _, target := range all {
			if targeted[target] == nil {
				targeted[target] = map[string]bool{}
			}
			targeted[target][z.name] = true
			t.want(target, z.name, serial, now, true, learnt[target])
		}
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	t.expireLocked(st, now)
	for addr, p := range t.peers {
		for zone := range p.zones {
			if !targeted[addr][zone] {
				delete(p.zones, zone)
			}
		}
		if len(p.zones) == 0 {
			delete(t.peers, addr)
		}
	}
}

// want records that the secondary at addr should serve zone at serial;
// learnt says it is no configured peer of the zone.
// A serial older than the one wanted already is taken only when it is
// the zone's current one: the store went back (Redis lost writes), and
// the secondaries holding the later serial are now ahead of it.
func (t *tracker) want(addr netip.AddrPort, zone string, serial uint32, now time.Time, current, learnt bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	pz := t.peerZoneLocked(addr, zone)
	pz.learnt = learnt
	if pz.want == 0 || store.Serial(pz.want).Less(store.Serial(serial)) || current && serial != pz.want {
		// Behind since now, unless it was behind already.
		if pz.want == 0 || pz.reached() {
			pz.wantSince = now
		}
		pz.want = serial
		select {
		case pz.wake <- struct{}{}:
		default:
		}
	}
	t.startLocked(addr, zone, pz)
}

// due reports whether a NOTIFY is owed or the serial is not confirmed.
func (pz *peerZone) due() bool {
	return pz.notified != pz.want || !pz.reached()
}

// confirm records that the secondary serves serial at now, unless it
// was seen serving a later one.
func (pz *peerZone) confirm(serial uint32, now time.Time) {
	if pz.confirmed == 0 || !store.Serial(serial).Less(store.Serial(pz.confirmed)) {
		pz.confirmed, pz.confirmedAt = serial, now
		if pz.reached() {
			pz.stale = false
		}
	}
}

// reached reports whether the secondary confirmed the wanted serial. One
// ahead of it has not: it serves other records, and takes none of the
// zone's until the zone's serial moves past its own (ahead.go).
func (pz *peerZone) reached() bool {
	return pz.confirmed != 0 && pz.confirmed == pz.want
}

func (t *tracker) peerLocked(addr netip.AddrPort) *peer {
	p := t.peers[addr]
	if p == nil {
		p = &peer{addr: addr, zones: map[string]*peerZone{}}
		t.peers[addr] = p
	}
	return p
}

// peerZoneLocked returns the state of zone on the secondary at addr,
// made when there is none yet.
func (t *tracker) peerZoneLocked(addr netip.AddrPort, zone string) *peerZone {
	p := t.peerLocked(addr)
	pz := p.zones[zone]
	if pz == nil {
		pz = &peerZone{wake: make(chan struct{}, 1)}
		p.zones[zone] = pz
	}
	return pz
}

// targets are where NOTIFY about z goes at now: its configured
// secondaries, those of other zones that transferred it (the catalog
// zone), and the learnt ones, which are also in learnt.
func (t *tracker) targets(st *settings, z servedZone, now time.Time) (all []netip.AddrPort, learnt map[netip.AddrPort]bool) {
	configured := t.configured(z.conf.access)
	peers := t.peerSet(st, z)
	all = slices.Clone(configured)
	learnt = map[netip.AddrPort]bool{}
	t.mu.Lock()
	defer t.mu.Unlock()
	for addr, zones := range t.learnt {
		h := zones[z.name]
		switch {
		case h == nil:
		case h.peer && peers[addr]:
			all = append(all, t.portsFor(st, addr, z)...)
		case h.learnt(st, now):
			for _, ap := range t.portsFor(st, addr, z) {
				all = append(all, ap)
				learnt[ap] = true
			}
		}
	}
	for _, ap := range configured {
		delete(learnt, ap)
	}
	slices.SortFunc(all, netip.AddrPort.Compare)
	return slices.Compact(all), learnt
}

// configured resolves access's peers to the addresses NOTIFY goes to.
func (t *tracker) configured(access schema.ZoneAccess) []netip.AddrPort {
	var out []netip.AddrPort
	t.mu.Lock()
	defer t.mu.Unlock()
	for _, p := range access.Peers {
		host, port, err := schema.SplitPeer(p)
		if err != nil {
			continue
		}
		if a, err := netip.ParseAddr(host); err == nil {
			out = append(out, netip.AddrPortFrom(a.Unmap(), port))
			continue
		}
		for _, a := range t.resolved[strings.ToLower(host)] {
			out = append(out, netip.AddrPortFrom(a, port))
		}
	}
	return out
}

// portsFor are where a secondary of z known by its address listens. A
// transfer or query comes from an ephemeral port, which says nothing,
// and several secondaries may share an address on different ports
// (BIND and Knot on one test host), each carrying its own zones. So the
// ports are those of the secondaries configured at the address that
// carry z: its own peers; for the catalog zone, failing those, the
// peers of any zone (any may follow the catalog); for a secondary of no
// zone there (learnt), those of every configured secondary at the
// address; else port 53.
func (t *tracker) portsFor(st *settings, addr netip.Addr, z servedZone) []netip.AddrPort {
	tiers := [][]schema.ZoneAccess{{z.conf.access}, st.transferPeers(z), st.allAccess()}
	for _, tier := range tiers {
		if out := t.portsAt(tier, addr); len(out) > 0 {
			return out
		}
	}
	return []netip.AddrPort{netip.AddrPortFrom(addr, 53)}
}

// portsAt lists the secondaries of accesses configured at addr, by their
// address and port, sorted.
func (t *tracker) portsAt(accesses []schema.ZoneAccess, addr netip.Addr) []netip.AddrPort {
	var out []netip.AddrPort
	for _, access := range accesses {
		for _, p := range access.Peers {
			host, port, err := schema.SplitPeer(p)
			if err != nil {
				continue
			}
			if a, err := netip.ParseAddr(host); err == nil && a.Unmap() == addr ||
				slices.Contains(t.resolved[strings.ToLower(host)], addr) {
				out = append(out, netip.AddrPortFrom(addr, port))
			}
		}
	}
	slices.SortFunc(out, netip.AddrPort.Compare)
	return slices.Compact(out)
}

// requester returns the settings, the zone, and whether addr is a
// configured peer of zone, for a request from addr about zone; ok is
// false when addr is not an address or zone is not served.
func (t *tracker) requester(addr netip.Addr, zone string) (st *settings, z servedZone, peer, ok bool) {
	if !addr.IsValid() {
		return nil, servedZone{}, false, false
	}
	st = t.s.settings()
	z, ok = st.zone(t.s.src, zone)
	if !ok {
		return nil, servedZone{}, false, false
	}
	return st, z, t.peerSet(st, z)[addr], true
}

// transferred records that addr transferred zone at serial; kind is
// "axfr" or "ixfr". A configured secondary gets NOTIFY for the zone from
// now on, any other address only once learn_peers has learnt it: an
// operator's one-off dig from an allowed address is no secondary.
//
// The transfer is credited only to the secondaries at addr that carry
// the zone (portsFor): another one there, with other zones, is sent no
// NOTIFY and no poll for it. When one of them listens at addr, the
// transfer is its own: it counts for it, and it needs no NOTIFY of the
// serial it fetched. When several do, on different ports, the transfer
// cannot be told apart: it counts in the server's totals only, every one
// of them is still sent NOTIFY, and each is confirmed by its own SOA
// answers only, so that none is left behind by another's transfer.
func (t *tracker) transferred(addr netip.Addr, zone string, serial uint32, kind string) {
	st, z, peer, ok := t.requester(addr, zone)
	if !ok {
		return
	}
	now := t.s.opts.Clock()
	t.mu.Lock()
	if !t.recordLocked(st, addr, zone, serial, peer, now) {
		t.mu.Unlock()
		return
	}
	targets := t.portsFor(st, addr, z)
	for _, target := range targets {
		pz := t.peerZoneLocked(target, zone)
		// Something at addr transfers again: poll whatever was stale.
		pz.stale = false
		if len(targets) > 1 {
			continue
		}
		if kind == "axfr" {
			pz.axfr++
		} else {
			pz.ixfr++
		}
		// It has the serial it fetched: the worker confirms by polling,
		// or, where it cannot, the transfer does.
		pz.notified, pz.fetched, pz.refresh = serial, serial, 0
		if pz.unpolled {
			pz.confirm(serial, now)
		}
	}
	t.mu.Unlock()
	for _, target := range targets {
		t.want(target, zone, serial, now, false, !peer)
	}
}

// peerAddrs returns the addresses of access's secondaries: those given as
// addresses, and the last resolution of those given as host names.
func (t *tracker) peerAddrs(access schema.ZoneAccess) []netip.Addr {
	var out []netip.Addr
	for _, ap := range t.configured(access) {
		out = append(out, ap.Addr())
	}
	return out
}

// resolve looks up every configured host-name secondary, IPv4 and IPv6.
// A failed lookup keeps the previous addresses: a DNS hiccup must not
// cut a secondary off.
func (t *tracker) resolve(ctx context.Context) {
	hosts := map[string]bool{}
	for _, access := range t.s.settings().allAccess() {
		for _, p := range access.Peers {
			if host, _, err := schema.SplitPeer(p); err == nil {
				if _, err := netip.ParseAddr(host); err != nil {
					hosts[strings.ToLower(host)] = true
				}
			}
		}
	}
	next := map[string][]netip.Addr{}
	for host := range hosts {
		lctx, cancel := context.WithTimeout(ctx, t.s.opts.NotifyTimeout)
		addrs, err := t.s.opts.Resolver.LookupNetIP(lctx, "ip", host)
		cancel()
		if err != nil {
			t.s.log.Warn("cannot resolve a secondary", "peer", host, "err", err)
			t.mu.Lock()
			next[host] = t.resolved[host]
			t.mu.Unlock()
			continue
		}
		for i := range addrs {
			addrs[i] = addrs[i].Unmap()
		}
		slices.SortFunc(addrs, netip.Addr.Compare)
		next[host] = slices.Compact(addrs)
	}
	t.mu.Lock()
	t.resolved = next
	t.mu.Unlock()
	t.setSecondaries()
}

// allAccess lists the access settings of every zone, catalog included.
func (st *settings) allAccess() []schema.ZoneAccess {
	out := []schema.ZoneAccess{st.reverse.access}
	for _, zc := range st.forward {
		out = append(out, zc.access)
	}
	if st.catalog != nil {
		out = append(out, st.catalog.access)
	}
	return out
}
