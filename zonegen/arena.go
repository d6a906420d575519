package zonegen

import (
	"net/netip"
	"strconv"
	"unsafe"
)

// arenaChunk is sized to hold the names of a typical VM (a dozen names of
// about 80 octets, SRV and PTR data) in one allocation.
const arenaChunk = 2048

// str concatenates parts into the builder's string arena and returns the
// result. Names are most of what Generate allocates; carving them out of
// one chunk per VM instead of one allocation each halves the allocations
// per view. The bytes behind a returned string are never written again
// (a full chunk is replaced, not grown in place), so the strings stay
// valid and immutable for as long as anything refers to them.
func (b *builder) str(parts ...string) string {
	n := 0
	for _, p := range parts {
		n += len(p)
	}
	if n == 0 {
		return ""
	}
	if cap(b.arena)-len(b.arena) < n {
		b.arena = make([]byte, 0, max(arenaChunk, n))
	}
	start := len(b.arena)
	for _, p := range parts {
		b.arena = append(b.arena, p...)
	}
	return unsafe.String(&b.arena[start], n)
}

// reserve makes room for n more bytes in the arena, starting a new chunk
// when the current one is too small, and returns the offset to write at.
func (b *builder) reserve(n int) int {
	if cap(b.arena)-len(b.arena) < n {
		b.arena = make([]byte, 0, max(arenaChunk, n))
	}
	return len(b.arena)
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
