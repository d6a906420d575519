package secondarytest

import (
	"net"
	"testing"
)

// ListenPair binds a UDP and a TCP socket on one port of 127.0.0.1, as a
// DNS server needs, trying another port when the TCP one is taken. The
// test's cleanup closes neither: the server given them does.
func ListenPair(t testing.TB) (net.PacketConn, net.Listener) {
	t.Helper()
	for range 20 {
		pc, err := net.ListenPacket("udp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		l, err := net.Listen("tcp", pc.LocalAddr().String())
		if err == nil {
			return pc, l
		}
		pc.Close()
	}
	t.Fatal("no port of 127.0.0.1 free for both UDP and TCP")
	return nil, nil
}
