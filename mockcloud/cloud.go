package mockcloud

import (
	"io"
	"log/slog"
	"maps"
	"slices"
	"sync"
	"time"
)

// Options tunes a Cloud. The zero value (or nil) is usable.
type Options struct {
	Logger *slog.Logger     // nil discards
	Now    func() time.Time // clock for timestamps; nil is time.Now
	// ChangefeedV2Only makes the publisher refuse an Accept-Version
	// range that admits v1 (or none), as a publisher that dropped the
	// v1 registration would: 400 InvalidVersion.
	ChangefeedV2Only bool
}

// Cloud is one simulated cloud: its objects, its changefeed publisher and
// the record of account changes. All methods are safe for concurrent use.
type Cloud struct {
	log  *slog.Logger
	now  func() time.Time
	feed *hub
	// v2Only: see Options.ChangefeedV2Only.
	v2Only bool
	// refused: the requests answered as a real service refuses them.
	refused refusals

	mu  sync.Mutex // guards the fields below
	vms map[string]*VM
	// byUUID is the uuids of vms sorted, rebuilt when a VM was added
	// (VMs are never deleted: destroyed ones stay, as in VMAPI).
	byUUID []string
	// vmGen counts the changes to vms; counts, the number of VMs each
	// listing filter matched, holds while countsGen is vmGen.
	vmGen     uint64
	counts    map[string]int
	countsGen uint64
	users     []*User
	servers   []*Server
	networks  []*Network
	pools     []*Pool
	nics      []*NAPINIC // NAPI's own NIC table (Fixture.NICs)
	userLog   []UserChange
}

// New builds a Cloud from a copy of f.
func New(f *Fixture, o *Options) *Cloud {
	if o == nil {
		o = &Options{}
	}
	c := &Cloud{log: o.Logger, now: o.Now, v2Only: o.ChangefeedV2Only, vms: map[string]*VM{}}
	if c.log == nil {
		c.log = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	c.log = c.log.With("component", "mockcloud")
	if c.now == nil {
		c.now = time.Now
	}
	c.feed = newHub(c.log)
	for _, v := range f.VMs {
		v := cloneVM(v)
		normalizeVM(&v)
		c.vms[v.UUID] = &v
	}
	for _, u := range f.Users {
		c.users = append(c.users, &u)
	}
	for _, s := range f.Servers {
		s.Sysinfo = maps.Clone(s.Sysinfo)
		c.servers = append(c.servers, &s)
	}
	for _, n := range f.Networks {
		n.OwnerUUIDs = slices.Clone(n.OwnerUUIDs)
		n.Resolvers = slices.Clone(n.Resolvers)
		c.networks = append(c.networks, &n)
	}
	for _, p := range f.NetworkPools {
		p.Networks = slices.Clone(p.Networks)
		p.OwnerUUIDs = slices.Clone(p.OwnerUUIDs)
		c.pools = append(c.pools, &p)
	}
	for _, n := range f.NICs {
		n.IPs = slices.Clone(n.IPs)
		c.nics = append(c.nics, &n)
	}
	c.logExtraKeys(f)
	return c
}

// logExtraKeys says, in one line, how many keys the fixture's objects
// carry that the cloud does not model: they are kept and sent as they
// came, so a dump of a real cloud is served as it is.
func (c *Cloud) logExtraKeys(f *Fixture) {
	n := f.ExtraKeys()
	if len(n) == 0 {
		return
	}
	args := []any{}
	for _, kind := range slices.Sorted(maps.Keys(n)) {
		args = append(args, kind, n[kind])
	}
	c.log.Info("fixture keys kept and sent as they came (extra keys per kind)", args...)
}

// Fixture returns the cloud's current state as a fixture, VMs sorted by
// uuid; LoadFixture of its JSON gives the same cloud back.
func (c *Cloud) Fixture() *Fixture {
	c.mu.Lock()
	defer c.mu.Unlock()
	f := &Fixture{VMs: c.vmsLocked()}
	for _, u := range c.users {
		f.Users = append(f.Users, *u)
	}
	for _, s := range c.servers {
		s := *s
		s.Sysinfo = maps.Clone(s.Sysinfo)
		f.Servers = append(f.Servers, s)
	}
	for _, n := range c.networks {
		f.Networks = append(f.Networks, *n)
	}
	for _, p := range c.pools {
		f.NetworkPools = append(f.NetworkPools, *p)
	}
	for _, n := range c.nics {
		f.NICs = append(f.NICs, *n)
	}
	return f
}

// VM returns a copy of one VM, destroyed ones included, as VMAPI does.
func (c *Cloud) VM(uuid string) (VM, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	v, ok := c.vms[uuid]
	if !ok {
		return VM{}, false
	}
	return cloneVM(*v), true
}

// vmsLocked returns copies of all VMs sorted by uuid, ascending.
func (c *Cloud) vmsLocked() []VM {
	out := make([]VM, 0, len(c.vms))
	for _, uuid := range c.sortedLocked() {
		out = append(out, cloneVM(*c.vms[uuid]))
	}
	return out
}

// sortedLocked returns the uuids of every VM, ascending. A listing page
// walks it without copying the VMs it skips, so listing 100k VMs in pages
// costs the pages, not 100 copies of the cloud.
func (c *Cloud) sortedLocked() []string {
	if len(c.byUUID) != len(c.vms) {
		c.byUUID = slices.Sorted(maps.Keys(c.vms))
	}
	return c.byUUID
}

// timestamp formats t the way the APIs do: ISO 8601, UTC, milliseconds.
func timestamp(t time.Time) string { return t.UTC().Format("2006-01-02T15:04:05.000Z") }

// normalizeVM gives a VM the empty collections VMAPI always sends, so that
// a fixture may leave them out.
func normalizeVM(v *VM) {
	if v.Tags == nil {
		v.Tags = map[string]any{}
	}
	if v.CustomerMetadata == nil {
		v.CustomerMetadata = map[string]any{}
	}
	if v.InternalMetadata == nil {
		v.InternalMetadata = map[string]any{}
	}
	if v.NICs == nil {
		v.NICs = []NIC{}
	}
	if v.Brand == "" {
		v.Brand = "joyent"
	}
	if v.State == "" {
		v.State = "running"
	}
}

// cloneVM copies v deeply enough that the copy shares nothing the cloud
// changes in place: tag and metadata values (objects included) and Extra
// are only ever replaced whole, never changed inside.
func cloneVM(v VM) VM {
	v.Tags = maps.Clone(v.Tags)
	v.CustomerMetadata = maps.Clone(v.CustomerMetadata)
	v.InternalMetadata = maps.Clone(v.InternalMetadata)
	v.NICs = slices.Clone(v.NICs)
	for i := range v.NICs {
		v.NICs[i].IPs = slices.Clone(v.NICs[i].IPs)
		v.NICs[i].Gateways = slices.Clone(v.NICs[i].Gateways)
	}
	return v
}
