package zonegen

import (
	"net/netip"
	"strconv"
	"strings"
)

const hexDigits = "0123456789abcdef"

// ReverseName returns the reverse zone of ip (the IPv4 /24 under
// in-addr.arpa, or the IPv6 /64 under ip6.arpa, without trailing dot) and
// the absolute owner name of its PTR record.
func ReverseName(ip netip.Addr) (zone, name string) {
	if ip.Is4() {
		a := ip.As4()
		host := strconv.Itoa(int(a[3]))
		name = host + "." + strconv.Itoa(int(a[2])) + "." + strconv.Itoa(int(a[1])) + "." +
			strconv.Itoa(int(a[0])) + ".in-addr.arpa."
		return name[len(host)+1 : len(name)-1], name
	}
	a := ip.As16()
	var b strings.Builder
	b.Grow(64 + len("ip6.arpa."))
	for i := 15; i >= 0; i-- {
		b.WriteByte(hexDigits[a[i]&0xf])
		b.WriteByte('.')
		b.WriteByte(hexDigits[a[i]>>4])
		b.WriteByte('.')
	}
	b.WriteString("ip6.arpa.")
	name = b.String()
	// The host part is the first 16 nibbles, 32 octets of "n.".
	return name[32 : len(name)-1], name
}
