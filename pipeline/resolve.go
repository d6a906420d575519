package pipeline

import (
	"context"
	"errors"
	"slices"
	"time"

	"github.com/cnsd/cnsd/feed"
	"github.com/cnsd/cnsd/zonegen"
)

// lookups remembers, for one pass over many VMs, the answers already
// given, so that VMs sharing an owner or a network during an outage cost
// one failed request, not one each.
type lookups struct {
	owners   map[string]lookup[zonegen.Account]
	networks map[string]lookup[zonegen.Network]
	// views are the Networks maps of views, by the one or two networks
	// they hold (viewNetworks): shared, never written once made.
	views map[[2]string]map[string]zonegen.Network
	// ownersDown: an owner lookup failed in this pass; the others take
	// what the client has cached rather than each waiting for UFDS.
	ownersDown bool
}

// CachedOwners is implemented by an Owners that can answer from what it
// read before without asking its server (feed.UFDS).
type CachedOwners interface {
	Cached(uuid string) (zonegen.Account, bool)
}

type lookup[V any] struct {
	val V
	err error
}

var errOwnersDown = errors.New("account not cached and UFDS failed earlier in this pass")

func newLookups() *lookups {
	return &lookups{owners: map[string]lookup[zonegen.Account]{}, networks: map[string]lookup[zonegen.Network]{},
		views: map[[2]string]map[string]zonegen.Network{}}
}

// resolve builds vm's view. A lookup that failed is left out of the view,
// so that Decide calls the VM unresolved; a NIC that could not be repaired
// is returned as the reason instead, since Decide cannot see it.
func (r *resolver) resolve(ctx context.Context, vm zonegen.VM, memo *lookups) (zonegen.View, *zonegen.Reason) {
	lctx := lazyDeadline{parent: ctx, deadline: time.Now().Add(r.timeout)}
	defer lctx.cancel()
	v := zonegen.View{VM: vm}
	if acct, err := r.owner(lctx.get, vm.OwnerUUID, memo); err == nil {
		v.Owner = &acct
	}
	if vm.ServerUUID != "" {
		if s, ok := r.servers.Server(vm.ServerUUID); ok {
			v.Server = &s
		}
	}
	var nets viewNetworks
	// The view shares vm's NICs until a repair writes one: few VMs need
	// one, and a copy for each of 100k was a tenth of resolving.
	cloned := false
	for i := range v.VM.NICs {
		nic := &v.VM.NICs[i]
		if zonegen.IsAdminNIC(nic) {
			continue
		}
		if feed.NeedsRepair(nic) && nic.MAC != "" {
			fixed, err := r.networks.RepairNIC(lctx.get(), vm.UUID, *nic)
			if err != nil && !errors.Is(err, feed.ErrNotFound) {
				v.Networks = nets.view(memo)
				return v, &zonegen.Reason{Code: zonegen.ReasonNetworkUnknown, Detail: "nic " + nic.MAC + ": " + err.Error()}
			}
			if !cloned {
				v.VM.NICs, cloned = slices.Clone(v.VM.NICs), true
				nic = &v.VM.NICs[i]
			}
			*nic = fixed
		}
		if nic.NetworkUUID == "" {
			continue
		}
		if _, err := r.network(lctx.get, nic.NetworkUUID, memo); err == nil {
			nets.add(nic.NetworkUUID)
		}
	}
	v.Networks = nets.view(memo)
	return v, nil
}

// lazyDeadline is the context bounding one VM's lookups, made on first
// use: most VMs of a listing are resolved from the memo alone, and a
// context with a deadline (a timer, a goroutine's worth of bookkeeping)
// for each of 100k VMs was a tenth of a bootstrap's resolving. The
// deadline is taken when the VM's resolving starts, as before.
type lazyDeadline struct {
	parent   context.Context
	deadline time.Time
	ctx      context.Context
	stop     context.CancelFunc
}

func (l *lazyDeadline) get() context.Context {
	if l.ctx == nil {
		l.ctx, l.stop = context.WithDeadline(l.parent, l.deadline)
	}
	return l.ctx
}

func (l *lazyDeadline) cancel() {
	if l.stop != nil {
		l.stop()
	}
}

// viewNetworks collects the networks a view describes, by UUID: their
// values are the memo's.
type viewNetworks struct {
	ids  [2]string
	n    int
	more bool // over two distinct networks
	all  []string
}

func (vn *viewNetworks) add(id string) {
	if slices.Contains(vn.ids[:vn.n], id) {
		return
	}
	if vn.n < len(vn.ids) {
		vn.ids[vn.n] = id
		vn.n++
		return
	}
	vn.more = true
	vn.all = append(vn.all, id)
}

// view is the map of the view: nil for none. The views of VMs on the
// same one or two networks share one map, kept in memo, which no one
// writes once it is made: a map for each of 100k VMs was a third of a
// bootstrap's resolving.
func (vn *viewNetworks) view(memo *lookups) map[string]zonegen.Network {
	if vn.n == 0 {
		return nil
	}
	if !vn.more {
		if m, ok := memo.views[vn.ids]; ok {
			return m
		}
	}
	m := make(map[string]zonegen.Network, vn.n+len(vn.all))
	for _, id := range vn.ids[:vn.n] {
		m[id] = memo.networks[id].val
	}
	for _, id := range vn.all {
		m[id] = memo.networks[id].val
	}
	if !vn.more {
		memo.views[vn.ids] = m
	}
	return m
}

// owner looks up an account. UFDS answering that there is none gives an
// account with no flags set, which lists nothing: that is UFDS's answer,
// not an outage.
func (r *resolver) owner(ctx func() context.Context, uuid string, memo *lookups) (zonegen.Account, error) {
	if m, ok := memo.owners[uuid]; ok {
		return m.val, m.err
	}
	if cached, ok := r.owners.(CachedOwners); ok && memo.ownersDown {
		acct, found := cached.Cached(uuid)
		if !found {
			return acct, errOwnersDown
		}
		return acct, nil
	}
	acct, err := r.fetchOwner(ctx(), uuid)
	r.recordOwner(memo, uuid, acct, err)
	return acct, err
}

// fetchOwner asks for an owner: UFDS knowing no such account gives an
// account with nothing but its UUID.
func (r *resolver) fetchOwner(ctx context.Context, uuid string) (zonegen.Account, error) {
	acct, err := r.owners.User(ctx, uuid)
	if errors.Is(err, feed.ErrNoAccount) {
		return zonegen.Account{UUID: uuid}, nil
	}
	return acct, err
}

// recordOwner keeps what fetchOwner gave in memo; a failure marks the
// owners down for the rest of the pass.
func (r *resolver) recordOwner(memo *lookups, uuid string, acct zonegen.Account, err error) {
	if err != nil {
		r.log.Debug("owner lookup failed", "vm_owner", uuid, "err", err)
		memo.ownersDown = true
	}
	memo.owners[uuid] = lookup[zonegen.Account]{acct, err}
}

// network looks up a network. NAPI answering 404 gives a network with no
// name, owners or pools, which maps only to a catch-all zone.
func (r *resolver) network(ctx func() context.Context, uuid string, memo *lookups) (zonegen.Network, error) {
	if m, ok := memo.networks[uuid]; ok {
		return m.val, m.err
	}
	net, err := r.fetchNetwork(ctx(), uuid)
	r.recordNetwork(memo, uuid, net, err)
	return net, err
}

// fetchNetwork asks NAPI for a network; its 404 gives a network with
// nothing but its UUID.
func (r *resolver) fetchNetwork(ctx context.Context, uuid string) (zonegen.Network, error) {
	net, err := r.networks.Network(ctx, uuid)
	if errors.Is(err, feed.ErrNotFound) {
		return zonegen.Network{UUID: uuid}, nil
	}
	return net, err
}

// recordNetwork keeps what fetchNetwork gave in memo.
func (r *resolver) recordNetwork(memo *lookups, uuid string, net zonegen.Network, err error) {
	if err != nil {
		r.log.Debug("network lookup failed", "network", uuid, "err", err)
	}
	memo.networks[uuid] = lookup[zonegen.Network]{net, err}
}
