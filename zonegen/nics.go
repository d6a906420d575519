package zonegen

import (
	"net/netip"
	"strings"
)

// address is one usable NIC address with the zones it is published in.
type address struct {
	ip     netip.Addr
	text   string // ip in presentation form, filled in by the builder
	zones  []int
	net    Network
	hasNet bool   // false when NAPI did not describe the network
	label  string // the dnsified network name, once netLabel needed it
}

// isAdminNIC reports whether nic is never published: on the admin network
// (nic_tag admin or admin_rack_<id>, untagged) or on the manta network
// (nic_tag manta or manta_rack_<id>, tagged or not). Tags are matched as
// Triton's netconfig library matches them: case-insensitively, <id> being
// one or more of [A-Za-z0-9_-].
func isAdminNIC(nic *NIC) bool {
	if isRackTag(nic.NICTag, "manta") {
		return true
	}
	return isRackTag(nic.NICTag, "admin") && nic.VLANID == 0
}

// isRackTag reports whether tag is base or base_rack_<id> in any case.
func isRackTag(tag, base string) bool {
	if len(tag) < len(base) || !strings.EqualFold(tag[:len(base)], base) {
		return false
	}
	rest := tag[len(base):]
	if rest == "" {
		return true
	}
	const rack = "_rack_"
	if len(rest) <= len(rack) || !strings.EqualFold(rest[:len(rack)], rack) {
		return false
	}
	for i := len(rack); i < len(rest); i++ {
		if c := rest[i]; !isLabelChar(c) && c != '_' {
			return false
		}
	}
	return true
}

// zonesFor maps a NIC to its zones: every zone listing its network or one
// of its pools (once each, in config order), else the catch-all zones.
//
// The result may share memory with the Generator and must not be modified.
func (g *Generator) zonesFor(nic *NIC, net *Network) []int {
	zones := g.byNetwork[lowerASCII(nic.NetworkUUID)]
	shared := true
	if net != nil {
		for _, p := range net.Pools {
			for _, i := range g.byNetwork[lowerASCII(p)] {
				if containsInt(zones, i) {
					continue
				}
				if shared {
					zones, shared = append([]int(nil), zones...), false
				}
				zones = append(zones, i)
			}
		}
	}
	if len(zones) == 0 {
		return g.catchAll
	}
	if !shared {
		sortInts(zones)
	}
	return zones
}

// lowerASCII is strings.ToLower without the allocation for the usual,
// already lower-case UUID.
func lowerASCII(s string) string {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c >= 'A' && c <= 'Z' {
			return strings.ToLower(s)
		}
	}
	return s
}

// addresses lists the VM's publishable addresses, noting every NIC or
// address that was skipped and why.
func (g *Generator) addresses(v *View, out []address, notes *[]Reason) []address {
	for i := range v.VM.NICs {
		nic := &v.VM.NICs[i]
		if isAdminNIC(nic) {
			*notes = append(*notes, Reason{ReasonAdminNIC, "nic " + nic.MAC + " tag " + nic.NICTag})
			continue
		}
		net, hasNet := v.Networks[nic.NetworkUUID]
		var zones []int
		if hasNet {
			zones = g.zonesFor(nic, &net)
		} else {
			zones = g.zonesFor(nic, nil)
		}
		if len(zones) == 0 {
			*notes = append(*notes, Reason{ReasonNoZone, "nic " + nic.MAC + " network " + nic.NetworkUUID})
			continue
		}
		add := func(s string) {
			ip, ok := parseNICAddr(s)
			if !ok {
				*notes = append(*notes, Reason{ReasonNoAddress, "nic " + nic.MAC + " address " + s})
				return
			}
			out = append(out, address{ip: ip, zones: zones, net: net, hasNet: hasNet})
		}
		if len(nic.IPs) == 0 && nic.IP != "" {
			add(nic.IP)
		}
		for _, s := range nic.IPs {
			add(s)
		}
	}
	return out
}

// parseNICAddr accepts "10.0.0.5", "10.0.0.5/24" and IPv6 forms; "dhcp",
// "addrconf" and anything unparsable are not usable.
func parseNICAddr(s string) (netip.Addr, bool) {
	if i := strings.IndexByte(s, '/'); i >= 0 {
		s = s[:i]
	}
	ip, err := netip.ParseAddr(s)
	if err != nil || ip.Zone() != "" || !ip.IsValid() {
		return netip.Addr{}, false
	}
	return ip, true
}

func containsInt(s []int, v int) bool {
	for _, x := range s {
		if x == v {
			return true
		}
	}
	return false
}

// sortInts is an insertion sort: zone lists are a handful long.
func sortInts(s []int) {
	for i := 1; i < len(s); i++ {
		for j := i; j > 0 && s[j] < s[j-1]; j-- {
			s[j], s[j-1] = s[j-1], s[j]
		}
	}
}

// IsAdminNIC reports whether nic is never published: an admin NIC
// (nic_tag admin or admin_rack_*, untagged) or a manta NIC (nic_tag manta
// or manta_rack_*). Its network need not be known to name the VM.
func IsAdminNIC(nic *NIC) bool { return isAdminNIC(nic) }

// ZonesFor returns the forward zones, in configuration order, a NIC on
// net maps to: every zone listing the network or one of its pools, else
// the catch-all zones.
func (g *Generator) ZonesFor(net Network) []string {
	idx := g.zonesFor(&NIC{NetworkUUID: net.UUID}, &net)
	out := make([]string, len(idx))
	for i, zi := range idx {
		out[i] = g.cfg.Zones[zi].Name
	}
	return out
}
