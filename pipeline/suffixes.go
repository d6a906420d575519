package pipeline

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/cnsd/cnsd/feed"
	"github.com/cnsd/cnsd/zonegen"
)

// Pools lists NAPI's network pools; feed.NAPI has it. Suffixes uses it to
// read a pool uuid given as a network.
type Pools interface {
	Pools(ctx context.Context) ([]feed.Pool, error)
}

// Suffixes returns the name suffixes a VM of owner with NICs on networks
// (network or pool uuids) would get, the way Triton CNS answered POST
// /suffixes-for-vm: for each zone a NIC maps to, "svc.<owner>.<zone>" and
// "inst.<owner>.<zone>", the owner being its login under use_login. A
// pool stands for its first network. Lookups that fail fail the call.
func (p *Pipeline) Suffixes(ctx context.Context, owner string, networks []string) ([]string, error) {
	acct, err := p.cfg.Owners.User(ctx, owner)
	if err != nil {
		return nil, fmt.Errorf("owner %s: %w", owner, err)
	}
	p.mu.Lock()
	gen, useLogin := p.gen, p.settings.Naming.UseLogin
	p.mu.Unlock()
	label := strings.ToLower(owner)
	if useLogin {
		label = zonegen.Dnsify(acct.Login)
	}
	var out []string
	for _, id := range networks {
		net, err := p.networkOrPool(ctx, id)
		if err != nil {
			return nil, err
		}
		for _, zone := range gen.ZonesFor(net) {
			if svc := "svc." + label + "." + zone; !slices.Contains(out, svc) {
				out = append(out, svc, "inst."+label+"."+zone)
			}
		}
	}
	if out == nil {
		out = []string{}
	}
	return out, nil
}

// networkOrPool looks id up as a network, or as a pool standing for its
// first network.
func (p *Pipeline) networkOrPool(ctx context.Context, id string) (zonegen.Network, error) {
	if pools, ok := p.cfg.Networks.(Pools); ok {
		all, err := pools.Pools(ctx)
		if err != nil {
			return zonegen.Network{}, fmt.Errorf("network pools: %w", err)
		}
		for _, pool := range all {
			if strings.EqualFold(pool.UUID, id) && len(pool.Networks) > 0 {
				net, err := p.cfg.Networks.Network(ctx, pool.Networks[0])
				if err != nil {
					return zonegen.Network{}, fmt.Errorf("network %s of pool %s: %w", pool.Networks[0], id, err)
				}
				return net, nil
			}
		}
	}
	net, err := p.cfg.Networks.Network(ctx, id)
	if err != nil {
		return zonegen.Network{}, fmt.Errorf("network %s: %w", id, err)
	}
	return net, nil
}
