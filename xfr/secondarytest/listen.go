package secondarytest

import (
	"net"
	"net/netip"
	"testing"
)

// ListenPair binds a UDP and a TCP socket on one port of 127.0.0.1, as a
// DNS server needs, trying another port when the TCP one is taken. The
// test's cleanup closes neither: the server given them does.
func ListenPair(t testing.TB) (net.PacketConn, net.Listener) {
	t.Helper()
	return ListenPairOn(t, netip.AddrFrom4([4]byte{127, 0, 0, 1}))
}

// ListenPairOn is ListenPair on the address host (::1, say).
func ListenPairOn(t testing.TB, host netip.Addr) (net.PacketConn, net.Listener) {
	t.Helper()
	for range 20 {
		pc, err := net.ListenPacket("udp", netip.AddrPortFrom(host, 0).String())
		if err != nil {
			t.Fatal(err)
		}
		l, err := net.Listen("tcp", pc.LocalAddr().String())
		if err == nil {
			return pc, l
		}
		pc.Close()
	}
	t.Fatalf("no port of %s free for both UDP and TCP", host)
	return nil, nil
}
