package zonegen

import (
	"cmp"
	"slices"
	"strings"
)

// instance adds the instance names of address a in zone zi: every
// <inst>.inst.<owner> pair, network-prefixed in the catch-all zone for a
// network the owner owns, each with the address, the VM's UUID as TXT and
// any ACME challenge.
func (b *builder) instance(a *address, zi int) {
	typ := addrType(a)
	suffix := b.g.suffix[zi]
	net := b.netLabel(a, zi)
	for _, o := range b.owners {
		for _, i := range b.insts {
			b.instanceName(zi, b.str(i, ".inst.", o, suffix), typ, a.text)
			if net != "" {
				b.instanceName(zi, b.str(net, ".", i, ".inst.", o, suffix), typ, a.text)
			}
		}
	}
}

func (b *builder) instanceName(zi int, name string, typ Type, ip string) {
	if !b.usable(name) {
		return
	}
	b.add(zi, name, typ, ip)
	b.add(zi, name, TypeTXT, b.txt)
	b.acmeAt(zi, name)
}

// service adds the names of service s for address a in zone zi. While the
// VM is listed in s they carry its address, its UUID as TXT and one SRV
// per port aimed at the VM's primary name; otherwise only
// "verifying:<uuid>" TXT, so the name exists while certificates are made.
// Admin VMs also get the bare <service>.<zone>, without SRV.
func (b *builder) service(a *address, zi int, s *ServiceListing) {
	suffix := b.g.suffix[zi]
	var srv []string
	if s.Listed && len(s.Ports) > 0 {
		srv = make([]string, len(s.Ports))
		for i, p := range s.Ports {
			srv[i] = b.srvData(p, b.primary, suffix)
		}
	}
	net := b.netLabel(a, zi)
	for _, o := range b.owners {
		b.serviceName(a, zi, s, b.str(s.Name, ".svc.", o, suffix), srv)
		if net != "" {
			b.serviceName(a, zi, s, b.str(net, ".", s.Name, ".svc.", o, suffix), srv)
		}
	}
	if b.v.Owner != nil && b.v.Owner.Login == "admin" {
		b.serviceName(a, zi, s, b.str(s.Name, suffix), nil)
	}
}

func (b *builder) serviceName(a *address, zi int, s *ServiceListing, name string, srv []string) {
	if !b.usable(name) {
		return
	}
	b.acmeAt(zi, name)
	if !s.Listed {
		if b.verifying == "" {
			b.verifying = b.quoteTXT("verifying:", b.v.VM.UUID)
		}
		b.add(zi, name, TypeTXT, b.verifying)
		return
	}
	b.add(zi, name, addrType(a), a.text)
	b.add(zi, name, TypeTXT, b.txt)
	for _, data := range srv {
		b.add(zi, name, TypeSRV, data)
	}
}

func (b *builder) acmeAt(zi int, name string) {
	if len(b.acme) == 0 {
		return
	}
	at := b.str("_acme-challenge.", name)
	for _, txt := range b.acme {
		b.add(zi, at, TypeTXT, txt)
	}
}

// ptr adds the PTR of the address b.addrs[ai], unless an earlier one has
// the same IP: one PTR per IP, though two NICs may carry it. Its target is
// the reverse_ptr tag when valid, else the shortest of the primary name in
// each zone of every NIC with that IP, the first in NIC and then
// configuration order winning a tie, as Triton CNS chose (addInstance in
// lib/vm-to-zones.js).
func (b *builder) ptr(ai int) {
	a := &b.addrs[ai]
	for j := range ai {
		if b.addrs[j].ip == a.ip {
			return
		}
	}
	target := ""
	if b.d.PTRName != "" {
		target = b.d.PTRName + "."
	} else {
		best := -1
		for j := ai; j < len(b.addrs); j++ {
			if b.addrs[j].ip != a.ip {
				continue
			}
			for _, zi := range b.addrs[j].zones {
				if best < 0 || len(b.g.suffix[zi]) < len(b.g.suffix[best]) {
					best = zi
				}
			}
		}
		target = b.str(b.primary, b.g.suffix[best])
	}
	zone, name := b.reverseName(a.ip)
	if len(target)-1 > maxName {
		b.noteSkip("ptr:"+name, Reason{ReasonNameTooLong, "PTR target " + target})
		return
	}
	zi := slices.Index(b.rev, zone)
	if zi < 0 {
		zi = len(b.rev)
		b.rev = append(b.rev, zone)
	}
	b.add(len(b.g.cfg.Zones)+zi, name, TypePTR, target)
}

// usable reports whether an absolute name fits in 253 octets, noting it
// once when it does not.
func (b *builder) usable(name string) bool {
	if len(name)-1 <= maxName {
		return true
	}
	if !b.skipped[name] {
		b.noteSkip(name, Reason{ReasonNameTooLong, name})
	}
	return false
}

// add appends one record. Records arrive grouped by name (every caller
// emits all records of one name in a row), so a name is stored once per
// group and finish sorts groups instead of records.
func (b *builder) add(zi int, name string, typ Type, data string) {
	if n := len(b.groups); n == 0 || b.groups[n-1].zone != zi || b.groups[n-1].name != name {
		b.groups = append(b.groups, nameGroup{zone: zi, name: name, start: len(b.rdata)})
	}
	b.rdata = append(b.rdata, rdata{typ: typ, data: data})
	b.groups[len(b.groups)-1].end = len(b.rdata)
}

// nameGroup is a run of b.rdata owned by one name in one zone: forward
// zones in configuration order, then the reverse zones of b.rev.
type nameGroup struct {
	zone       int
	name       string
	start, end int
}

type rdata struct {
	typ  Type
	data string
}

func compareRdata(x, y rdata) int {
	if c := cmp.Compare(x.typ, y.typ); c != 0 {
		return c
	}
	return strings.Compare(x.data, y.data)
}

// finish sorts the names of each zone, merges and de-duplicates the
// records of each name, and returns the non-empty zones sorted by name,
// all sharing one backing array. Their strings are their own, not the
// scratch chunk's (keep, own): no string is made after it.
func (b *builder) finish() []ZoneRecords {
	// Sort indices: moving a pointer-free int32 is cheaper than moving a
	// group with its name, which needs GC write barriers.
	for i := range b.groups {
		b.order = append(b.order, int32(i))
	}
	slices.SortFunc(b.order, func(i, j int32) int {
		x, y := &b.groups[i], &b.groups[j]
		if c := cmp.Compare(x.zone, y.zone); c != 0 {
			return c
		}
		return strings.Compare(x.name, y.name)
	})
	b.keep()
	all := make([]Record, 0, len(b.rdata))
	// Every forward zone has the VM's CMON name and every reverse zone
	// a PTR: out is that long, and grown it took up to three allocations.
	out := make([]ZoneRecords, 0, len(b.g.cfg.Zones)+len(b.rev))
	start := 0
	for k := 0; k < len(b.order); {
		g := &b.groups[b.order[k]]
		recs := b.rdata[g.start:g.end]
		k++
		if k < len(b.order) && b.sameName(g, b.order[k]) {
			// The name was emitted in several runs (one per address).
			b.run = append(b.run[:0], recs...)
			for ; k < len(b.order) && b.sameName(g, b.order[k]); k++ {
				h := &b.groups[b.order[k]]
				b.run = append(b.run, b.rdata[h.start:h.end]...)
			}
			recs = b.run
		}
		slices.SortFunc(recs, compareRdata)
		name := b.own(g.name)
		for _, r := range slices.Compact(recs) {
			all = append(all, Record{Name: name, Type: r.typ, Data: b.own(r.data), Source: b.v.VM.UUID})
		}
		if k == len(b.order) || b.groups[b.order[k]].zone != g.zone {
			out = append(out, ZoneRecords{Zone: b.own(b.zoneName(g.zone)), Records: all[start:len(all):len(all)]})
			start = len(all)
		}
	}
	slices.SortFunc(out, func(x, y ZoneRecords) int { return strings.Compare(x.Zone, y.Zone) })
	return out
}

func (b *builder) sameName(g *nameGroup, other int32) bool {
	h := &b.groups[other]
	return h.zone == g.zone && h.name == g.name
}

func (b *builder) zoneName(zi int) string {
	if zi < len(b.g.cfg.Zones) {
		return b.g.cfg.Zones[zi].Name
	}
	return b.rev[zi-len(b.g.cfg.Zones)]
}

func addrType(a *address) Type {
	if a.ip.Is4() {
		return TypeA
	}
	return TypeAAAA
}
