package zonegen

import (
	"strconv"
	"strings"
)

// Generate returns the records the VM of v contributes to each zone,
// given its decision d (after hysteresis, if the caller applies it). A VM
// that is not listed contributes nothing; an unresolved decision yields an
// empty contribution marked Unresolved.
func (g *Generator) Generate(v *View, d *Decision) Contribution {
	c := Contribution{VM: v.VM.UUID}
	if d.Unresolved {
		c.Unresolved = true
		return c
	}
	if !d.Instance {
		return c
	}
	b := builder{g: g, v: v, d: d, uuid: lowerASCII(v.VM.UUID)}
	s, _ := g.scratch.Get().(*scratch)
	if s == nil {
		s = &scratch{}
	}
	if s.arena == nil {
		s.arena = make([]byte, 0, scratchArena)
	}
	b.scratch, b.arena = s, s.arena[:0]
	defer b.release()
	b.labels()
	b.addrs = g.addresses(v, b.addrs[:0], &b.notes)
	for ai := range b.addrs {
		a := &b.addrs[ai]
		a.text = b.ipText(a.ip)
		for _, zi := range a.zones {
			b.instance(a, zi)
			for i := range d.Services {
				b.service(a, zi, &d.Services[i])
			}
		}
	}
	for ai := range b.addrs {
		b.ptr(ai)
	}
	for zi := range g.cfg.Zones {
		b.add(zi, b.str(b.uuid, ".cmon", g.suffix[zi]), TypeCNAME, g.cmon[zi])
	}
	c.Zones = b.finish()
	// Nothing returned may point into the scratch chunk, which the next
	// Generate writes over: finish gave the records and zones their own
	// strings, and the notes quote names.
	for i := range b.notes {
		b.notes[i].Detail = b.own(b.notes[i].Detail)
	}
	c.Notes = b.notes
	return c
}

// builder accumulates one VM's records.
type builder struct {
	g    *Generator
	v    *View
	d    *Decision
	uuid string
	txt  string // the VM's UUID as TXT RDATA
	// verifying is "verifying:<uuid>" as TXT RDATA, made on first use
	verifying string
	// owners are the owner labels: uuid always, login with use_login
	// when valid; insts the instance labels: uuid always, alias with
	// use_alias when valid. The last of each makes the primary name.
	owners  []string
	insts   []string
	primary string // preferred "<inst>.inst.<owner>"
	acme    []string
	notes   []Reason
	skipped map[string]bool // keys already noted as skipped
	// arena backs the strings made by str: scratch.arena first, then
	// heap chunks; scratchUsed is how much of scratch.arena was used
	// once the arena left it.
	arena       []byte
	scratchUsed int
	// kept is the copy of the scratch chunk's strings, which started at
	// keptFrom (keep, own).
	kept     []byte
	keptFrom uintptr
	*scratch
}

// scratch is the builder's working memory, kept in a pool so that a
// Generate call allocates little more than the strings it returns.
type scratch struct {
	groups   []nameGroup
	rdata    []rdata
	run      []rdata
	order    []int32 // indices into groups, sorted by finish
	addrs    []address
	rev      []string // reverse zone names; their index is len(Zones)+i
	labelBuf [4]string
	arena    []byte // where the builder's arena starts (str)
}

func (b *builder) release() {
	s := b.scratch
	clear(s.groups)
	clear(s.rdata)
	clear(s.run)
	clear(s.addrs)
	clear(s.rev)
	s.rev = s.rev[:0]
	s.groups, s.rdata, s.run, s.addrs, s.order = s.groups[:0], s.rdata[:0], s.run[:0], s.addrs[:0], s.order[:0]
	s.labelBuf = [4]string{}
	b.g.scratch.Put(s)
}

// labels works out the owner and instance labels and the primary name:
// alias+login, else alias+uuid, else uuid+login, else uuid+uuid.
func (b *builder) labels() {
	owner := b.v.VM.OwnerUUID
	if b.v.Owner != nil && b.v.Owner.UUID != "" {
		owner = b.v.Owner.UUID
	}
	b.owners = append(b.labelBuf[0:0:2], lowerASCII(owner))
	b.insts = append(b.labelBuf[2:2:4], b.uuid)
	if b.g.cfg.UseLogin && b.v.Owner != nil {
		if l, ok := b.label("login", b.v.Owner.Login); ok {
			b.owners = append(b.owners, l)
		}
	}
	if b.g.cfg.UseAlias && b.v.VM.Alias != "" {
		if l, ok := b.label("alias", b.v.VM.Alias); ok {
			b.insts = append(b.insts, l)
		}
	}
	b.primary = b.str(b.insts[len(b.insts)-1], ".inst.", b.owners[len(b.owners)-1])
	b.txt = b.quoteTXT(b.v.VM.UUID)
	if acme, ok := b.v.VM.CustomerMetadata[MetaACME]; ok {
		for part := range strings.SplitSeq(acme, " ") {
			if part != "" {
				b.acme = append(b.acme, b.quoteTXT(part))
			}
		}
	}
}

// label dnsifies an alias or login, noting why it cannot be used when it
// is empty or too long.
func (b *builder) label(what, raw string) (string, bool) {
	l := b.dnsify(raw)
	switch {
	case l == "":
		b.notes = append(b.notes, Reason{ReasonEmptyLabel, what + " is empty"})
		return "", false
	case len(l) > maxLabel:
		b.notes = append(b.notes, Reason{ReasonLabelTooLong, what + " " + strconv.Quote(l) + " is " + strconv.Itoa(len(l)) + " octets"})
		return "", false
	}
	return l, true
}

// netLabel returns the network-name label for address a in zone zi, or ""
// when the zone is not the catch-all or the network is not owned by the
// VM's owner.
func (b *builder) netLabel(a *address, zi int) string {
	if !a.hasNet || !b.g.isCatchAll(zi) || !contains(a.net.OwnerUUIDs, b.owners[0]) {
		return ""
	}
	if a.label == "" {
		a.label = b.dnsify(a.net.Name)
	}
	l := a.label
	if l == "" || len(l) > maxLabel {
		key := "network:" + a.net.UUID
		if !b.skipped[key] {
			b.noteSkip(key, Reason{ReasonLabelTooLong, "network name " + strconv.Quote(a.net.Name) + " does not make a label of 1-63 octets"})
		}
		return ""
	}
	return l
}

func contains(s []string, v string) bool {
	for _, x := range s {
		if strings.EqualFold(x, v) {
			return true
		}
	}
	return false
}

func (b *builder) noteSkip(key string, r Reason) {
	if b.skipped == nil {
		b.skipped = map[string]bool{}
	}
	b.skipped[key] = true
	b.notes = append(b.notes, r)
}
