package mockcloud

import (
	"fmt"
	"net/netip"
)

// Indexes of the shared networks in Fixture.Networks as Generate lays them
// out; fabrics follow, one per account.
const (
	netAdmin = iota
	netExternal
	netExternal6
	netInternal
	netFabrics
)

func (g *gen) networks() {
	add := func(name, tag, prefix string, vlan int, owners []string, fabric bool) {
		p := netip.MustParsePrefix(prefix)
		n := Network{UUID: g.uuid(), Name: name, Family: "ipv4", VLANID: vlan, NICTag: tag,
			Subnet: p.String(), Resolvers: []string{"8.8.8.8", "8.8.4.4"}, MTU: 1500,
			OwnerUUIDs: owners, Fabric: fabric}
		first := p.Addr().Next()
		if p.Addr().Is6() {
			n.Family = "ipv6"
			n.Resolvers = []string{"2001:4860:4860::8888"}
		} else {
			n.Netmask = netmask(p.Bits())
			n.Gateway = first.String()
		}
		n.ProvisionStartIP = first.Next().String()
		n.ProvisionEndIP = lastAddr(p).String()
		g.next[n.UUID] = first.Next()
		g.f.Networks = append(g.f.Networks, n)
	}
	add("admin", "admin", "10.66.0.0/16", 0, nil, false)
	add("external", "external", "10.88.0.0/16", 0, nil, false)
	add("external-v6", "external", "fd00:88::/64", 0, nil, false)
	add("internal", "internal", "10.77.0.0/16", 0, nil, false)
	for i, u := range g.f.Users {
		name := "My Fabric"
		if i%2 == 1 {
			name = "default"
		}
		add(name, "sdc_overlay", fmt.Sprintf("192.168.%d.0/24", i%256), 2+i%4000, []string{u.UUID}, true)
	}
	nets := g.f.Networks
	// NAPI pools hold networks of one family only.
	g.f.NetworkPools = []Pool{
		{UUID: g.uuid(), Name: "public", Family: "ipv4", NICTag: "external", Networks: []string{nets[netExternal].UUID}},
		{UUID: g.uuid(), Name: "public-v6", Family: "ipv6", NICTag: "external", Networks: []string{nets[netExternal6].UUID}},
	}
}

func netmask(bits int) string {
	m := ^uint32(0) << (32 - bits)
	return netip.AddrFrom4([4]byte{byte(m >> 24), byte(m >> 16), byte(m >> 8), byte(m)}).String()
}

// lastAddr is the last usable address of p: the broadcast address is left
// out for IPv4.
func lastAddr(p netip.Prefix) netip.Addr {
	b := p.Addr().AsSlice()
	for i := range b {
		hostBits := max(0, min(8, (i+1)*8-p.Bits()))
		b[i] |= byte(1<<hostBits - 1)
	}
	a, _ := netip.AddrFromSlice(b)
	if a.Is4() {
		a = a.Prev()
	}
	return a
}

// nic allocates the next address of network i for a VM.
func (g *gen) nic(i, ifIndex int) NIC {
	n := g.f.Networks[i]
	a := g.next[n.UUID]
	if a.String() == n.ProvisionEndIP {
		// The network is full: wrap around; duplicate addresses are a
		// condition cnsd must survive anyway.
		a = netip.MustParseAddr(n.ProvisionStartIP)
	}
	g.next[n.UUID] = a.Next()
	p := netip.MustParsePrefix(n.Subnet)
	nic := NIC{Interface: fmt.Sprintf("net%d", ifIndex), MAC: g.mac(), VLANID: n.VLANID,
		NICTag: n.NICTag, Netmask: n.Netmask, Gateway: n.Gateway,
		IPs: []string{netip.PrefixFrom(a, p.Bits()).String()}, MTU: n.MTU, Model: "virtio",
		NetworkUUID: n.UUID, Primary: ifIndex == 0}
	if n.Gateway != "" {
		nic.Gateways = []string{n.Gateway}
	}
	if a.Is4() {
		nic.IP = a.String() // VMAPI sets ip only for IPv4 NICs; ips has the rest
	}
	return nic
}

// mac hands out MACs in sequence so that no two NICs share one (GET
// /nics/:mac must be unambiguous).
func (g *gen) mac() string {
	g.macs++
	v := g.macs
	return fmt.Sprintf("90:b8:d0:%02x:%02x:%02x", byte(v>>16), byte(v>>8), byte(v))
}
