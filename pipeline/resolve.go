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
func (p *Pipeline) resolve(ctx context.Context, vm zonegen.VM, memo *lookups) (zonegen.View, *zonegen.Reason) {
	ctx, cancel := context.WithTimeout(ctx, p.cfg.LookupTimeout)
	defer cancel()
	v := zonegen.View{VM: vm}
	if acct, err := p.owner(ctx, vm.OwnerUUID, memo); err == nil {
		v.Owner = &acct
	}
	if vm.ServerUUID != "" {
		if s, ok := p.cfg.Servers.Server(vm.ServerUUID); ok {
			v.Server = &s
		}
	}
	v.VM.NICs = slices.Clone(vm.NICs)
	for i := range v.VM.NICs {
		nic := &v.VM.NICs[i]
		if zonegen.IsAdminNIC(nic) {
			continue
		}
		if nic.NetworkUUID == "" && nic.MAC != "" {
			fixed, err := p.cfg.Networks.RepairNIC(ctx, *nic)
			if err != nil && !errors.Is(err, feed.ErrNotFound) {
				return v, &zonegen.Reason{Code: zonegen.ReasonNetworkUnknown, Detail: "nic " + nic.MAC + ": " + err.Error()}
			}
			*nic = fixed
		}
		if nic.NetworkUUID == "" {
			continue
		}
		if net, err := p.network(ctx, nic.NetworkUUID, memo); err == nil {
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
func (p *Pipeline) owner(ctx context.Context, uuid string, memo *lookups) (zonegen.Account, error) {
	if r, ok := memo.owners[uuid]; ok {
		return r.val, r.err
	}
	if cached, ok := p.cfg.Owners.(CachedOwners); ok && memo.ownersDown {
		acct, found := cached.Cached(uuid)
		if !found {
			return acct, errOwnersDown
		}
		return acct, nil
	}
	acct, err := p.cfg.Owners.User(ctx, uuid)
	if errors.Is(err, feed.ErrNoAccount) {
		acct, err = zonegen.Account{UUID: uuid}, nil
	}
	if err != nil {
		p.log.Debug("owner lookup failed", "vm_owner", uuid, "err", err)
		memo.ownersDown = true
	}
	memo.owners[uuid] = lookup[zonegen.Account]{acct, err}
	return acct, err
}

// network looks up a network. NAPI answering 404 gives a network with no
// name, owners or pools, which maps only to a catch-all zone.
func (p *Pipeline) network(ctx context.Context, uuid string, memo *lookups) (zonegen.Network, error) {
	if r, ok := memo.networks[uuid]; ok {
		return r.val, r.err
	}
	net, err := p.cfg.Networks.Network(ctx, uuid)
	if errors.Is(err, feed.ErrNotFound) {
		net, err = zonegen.Network{UUID: uuid}, nil
	}
	if err != nil {
		p.log.Debug("network lookup failed", "network", uuid, "err", err)
	}
	memo.networks[uuid] = lookup[zonegen.Network]{net, err}
	return net, err
}
