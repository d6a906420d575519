package pipeline

import (
	"context"
	"errors"
	"slices"

	"github.com/cnsd/cnsd/feed"
	"github.com/cnsd/cnsd/zonegen"
)

// lookups remembers, for one pass over many VMs, the answers already
// given, so that VMs sharing an owner or a network during an outage cost
// one failed request, not one each.
type lookups struct {
	owners   map[string]lookup[zonegen.Account]
	networks map[string]lookup[zonegen.Network]
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
	return &lookups{owners: map[string]lookup[zonegen.Account]{}, networks: map[string]lookup[zonegen.Network]{}}
}

// resolve builds vm's view. A lookup that failed is left out of the view,
// so that Decide calls the VM unresolved; a NIC that could not be repaired
// is returned as the reason instead, since Decide cannot see it.
func (r *resolver) resolve(ctx context.Context, vm zonegen.VM, memo *lookups) (zonegen.View, *zonegen.Reason) {
	ctx, cancel := context.WithTimeout(ctx, r.timeout)
	defer cancel()
	v := zonegen.View{VM: vm}
	if acct, err := r.owner(ctx, vm.OwnerUUID, memo); err == nil {
		v.Owner = &acct
	}
	if vm.ServerUUID != "" {
		if s, ok := r.servers.Server(vm.ServerUUID); ok {
			v.Server = &s
		}
	}
	v.VM.NICs = slices.Clone(vm.NICs)
	for i := range v.VM.NICs {
		nic := &v.VM.NICs[i]
		if zonegen.IsAdminNIC(nic) {
			continue
		}
		if feed.NeedsRepair(nic) && nic.MAC != "" {
			fixed, err := r.networks.RepairNIC(ctx, vm.UUID, *nic)
			if err != nil && !errors.Is(err, feed.ErrNotFound) {
				return v, &zonegen.Reason{Code: zonegen.ReasonNetworkUnknown, Detail: "nic " + nic.MAC + ": " + err.Error()}
			}
			*nic = fixed
		}
		if nic.NetworkUUID == "" {
			continue
		}
		if net, err := r.network(ctx, nic.NetworkUUID, memo); err == nil {
			if v.Networks == nil {
				v.Networks = map[string]zonegen.Network{}
			}
			v.Networks[nic.NetworkUUID] = net
		}
	}
	return v, nil
}

// owner looks up an account. UFDS answering that there is none gives an
// account with no flags set, which lists nothing: that is UFDS's answer,
// not an outage.
func (r *resolver) owner(ctx context.Context, uuid string, memo *lookups) (zonegen.Account, error) {
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
	acct, err := r.fetchOwner(ctx, uuid)
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
func (r *resolver) network(ctx context.Context, uuid string, memo *lookups) (zonegen.Network, error) {
	if m, ok := memo.networks[uuid]; ok {
		return m.val, m.err
	}
	net, err := r.fetchNetwork(ctx, uuid)
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
