package zonegen

import (
	"net/netip"
	"strconv"
	"unsafe"
)

// arenaChunk is the size of a chunk the builder's arena takes from the
// heap once the scratch one is full: a typical VM's names fit in the
// scratch chunk, and those of an odd one in a few of these.
const arenaChunk = 2048

// scratchArena is the size of the pooled chunk every Generate starts
// writing its strings in.
const scratchArena = 16 << 10

// str concatenates parts into the builder's string arena and returns the
// result. Names are most of what Generate allocates; carving them out of
// one chunk instead of one allocation each halves the allocations per
// view. The arena starts in the pooled scratch chunk, whose strings
// finish copies, all at once, into one allocation of the size they take
// (keep): a heap chunk of a fixed size held a third more than a VM's
// names, and the store keeps the records, so the chunk, for as long as
// the VM. The bytes behind a returned string are never written again
// before that copy (a full chunk is replaced, not grown in place).
func (b *builder) str(parts ...string) string {
	n := 0
	for _, p := range parts {
		n += len(p)
	}
	if n == 0 {
		return ""
	}
	start := b.reserve(n)
	for _, p := range parts {
		b.arena = append(b.arena, p...)
	}
	return unsafe.String(&b.arena[start], n)
}

// reserve makes room for n more bytes in the arena, starting a new chunk
// when the current one is too small, and returns the offset to write at.
func (b *builder) reserve(n int) int {
	if cap(b.arena)-len(b.arena) < n {
		if b.fromScratch() {
			b.scratchUsed = len(b.arena)
		}
		b.arena = make([]byte, 0, max(arenaChunk, n))
	}
	return len(b.arena)
}

// fromScratch reports whether the arena is still the scratch chunk.
func (b *builder) fromScratch() bool {
	return cap(b.arena) > 0 && cap(b.scratch.arena) > 0 && &b.arena[:1][0] == &b.scratch.arena[:1][0]
}

// keep copies the strings written in the scratch chunk to the heap, for
// own to find their copies: once, when every string is made.
func (b *builder) keep() {
	used := b.scratchUsed
	if b.fromScratch() {
		used = len(b.arena)
	}
	if used == 0 {
		return
	}
	scratch := b.scratch.arena[:used]
	b.kept = append([]byte(nil), scratch...)
	b.keptFrom = uintptr(unsafe.Pointer(unsafe.SliceData(scratch)))
}

// own returns s, or its copy (keep) when s is in the scratch chunk.
func (b *builder) own(s string) string {
	if len(b.kept) == 0 || s == "" {
		return s
	}
	off := uintptr(unsafe.Pointer(unsafe.StringData(s))) - b.keptFrom
	if off >= uintptr(len(b.kept)) {
		return s // not in the scratch chunk: the heap's, or not the arena's
	}
	return unsafe.String(&b.kept[off], len(s))
}

// seal returns the bytes appended since start as a string.
func (b *builder) seal(start int) string {
	if len(b.arena) == start {
		return ""
	}
	return unsafe.String(&b.arena[start], len(b.arena)-start)
}

// srvData renders SRV RDATA "priority weight port target".
func (b *builder) srvData(p Port, target, suffix string) string {
	start := b.reserve(3*6 + len(target) + len(suffix))
	b.arena = strconv.AppendUint(b.arena, uint64(p.Priority), 10)
	b.arena = append(b.arena, ' ')
	b.arena = strconv.AppendUint(b.arena, uint64(p.Weight), 10)
	b.arena = append(b.arena, ' ')
	b.arena = strconv.AppendUint(b.arena, uint64(p.Port), 10)
	b.arena = append(b.arena, ' ')
	b.arena = append(b.arena, target...)
	b.arena = append(b.arena, suffix...)
	return b.seal(start)
}

// ipText renders an address in presentation form.
func (b *builder) ipText(ip netip.Addr) string {
	start := b.reserve(len("ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff"))
	b.arena = ip.AppendTo(b.arena)
	return b.seal(start)
}

// reverseName is ReverseName writing into the arena.
func (b *builder) reverseName(ip netip.Addr) (zone, name string) {
	start := b.reserve(maxReverseName)
	var host int
	b.arena, host = appendReverseName(b.arena, ip)
	name = b.seal(start)
	return name[host-start : len(name)-1], name
}

// quoteTXT is QuoteTXT writing into the arena.
func (b *builder) quoteTXT(parts ...string) string {
	n := 2
	for _, p := range parts {
		n += len(p)
	}
	s := b.str(parts...)
	start := b.reserve(n + n/8)
	b.arena = appendQuoteTXT(b.arena, s)
	return b.seal(start)
}

// dnsify is Dnsify writing into the arena.
func (b *builder) dnsify(s string) string {
	if isDnsified(s) {
		return s
	}
	start := b.reserve(len(s))
	b.arena = appendDnsify(b.arena, s)
	return b.seal(start)
}
