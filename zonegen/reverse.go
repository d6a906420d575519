package zonegen

import (
	"net/netip"
	"strconv"
)

const (
	hexDigits      = "0123456789abcdef"
	maxReverseName = 64 + len("ip6.arpa.")
)

// ReverseName returns the reverse zone of ip (the IPv4 /24 under
// in-addr.arpa, or the IPv6 /64 under ip6.arpa, without trailing dot) and
// the absolute owner name of its PTR record.
func ReverseName(ip netip.Addr) (zone, name string) {
	buf, host := appendReverseName(make([]byte, 0, maxReverseName), ip)
	name = string(buf)
	return name[host : len(name)-1], name
}

// appendReverseName appends the PTR owner name of ip to dst and returns
// the offset in dst where its zone starts.
func appendReverseName(dst []byte, ip netip.Addr) ([]byte, int) {
	if ip.Is4() {
		a := ip.As4()
		dst = strconv.AppendUint(dst, uint64(a[3]), 10)
		host := len(dst) + 1
		for i := 2; i >= 0; i-- {
			dst = append(dst, '.')
			dst = strconv.AppendUint(dst, uint64(a[i]), 10)
		}
		return append(dst, ".in-addr.arpa."...), host
	}
	a := ip.As16()
	// The host part is the low 64 bits: 16 nibbles of "n.".
	host := len(dst) + 32
	for i := 15; i >= 0; i-- {
		dst = append(dst, hexDigits[a[i]&0xf], '.', hexDigits[a[i]>>4], '.')
	}
	return append(dst, "ip6.arpa."...), host
}
