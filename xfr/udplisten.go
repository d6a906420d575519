package xfr

import (
	"context"
	"fmt"
	"net"
)

// ListenUDP binds n UDP sockets to addr that share it (SO_REUSEPORT on
// Linux), for Options.PacketConns: the kernel spreads the datagrams of
// different clients over them by their addresses, and Run serves each
// with a worker of its own that reads, answers and writes it, as Knot
// does — no hand-over between goroutines and no wake-up per batch. The
// port of addr, when 0, is the one the first socket got. Where the
// system does not spread datagrams over sockets sharing an address
// (outside Linux), or n is below 2, it binds one socket.
func ListenUDP(ctx context.Context, addr string, n int) ([]net.PacketConn, error) {
	if !reusePortSpreads || n < 2 {
		n = 1
	}
	lc := net.ListenConfig{Control: reusePort}
	if n == 1 {
		lc.Control = nil
	}
	pcs := make([]net.PacketConn, 0, n)
	for range n {
		pc, err := lc.ListenPacket(ctx, "udp", addr)
		if err != nil {
			for _, pc := range pcs {
				pc.Close()
			}
			return nil, fmt.Errorf("dns listen udp %s: %w", addr, err)
		}
		if len(pcs) == 0 {
			addr = pc.LocalAddr().String() // the port the others share
		}
		pcs = append(pcs, pc)
	}
	return pcs, nil
}

// udpGroups groups pcs by their local address: sockets that share one
// (ListenUDP) are served as one address, the workers split among them.
func udpGroups(pcs []net.PacketConn) [][]net.PacketConn {
	var groups [][]net.PacketConn
	at := map[string]int{}
	for _, pc := range pcs {
		a := pc.LocalAddr().String()
		i, ok := at[a]
		if !ok {
			i = len(groups)
			at[a] = i
			groups = append(groups, nil)
		}
		groups[i] = append(groups[i], pc)
	}
	return groups
}
