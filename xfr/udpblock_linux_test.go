package xfr

import (
	"context"
	"errors"
	"net"
	"net/netip"
	"runtime"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// TestUDPBlockingStop: sockets that a worker each serves (ListenUDP,
// GOMAXPROCS of them) are read with blocking recvmmsg, their conns
// closed; the server answers on them, and when its context ends the
// reads blocked on idle sockets end at once — not at the read timeout,
// set here far beyond the test's patience. While the threads wait,
// GOMAXPROCS is one more than they are (blockedThreads), and given back
// when Run returns.
func TestUDPBlockingStop(t *testing.T) {
	defer func(d time.Duration) { udpReadTimeout = d }(udpReadTimeout)
	udpReadTimeout = time.Hour
	procs := runtime.GOMAXPROCS(0)
	pcs, err := ListenUDP(context.Background(), "127.0.0.1:0", procs)
	if err != nil {
		t.Fatal(err)
	}
	s := New(testConfig(t, `, "rrl": {"disabled": true}`), transportStore(t), Options{PacketConns: pcs}, nil)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- s.Run(ctx) }()
	askMany(t, pcs[0].LocalAddr().(*net.UDPAddr), 8, 4)
	for i, pc := range pcs {
		// Closed by the worker that took the socket over, while Run
		// still answers on it.
		if _, _, err := pc.ReadFrom(make([]byte, 1)); !errors.Is(err, net.ErrClosed) {
			t.Errorf("conn %d while served: %v, want closed (its socket read without the netpoller)", i, err)
		}
	}
	if got := runtime.GOMAXPROCS(0); got != procs+1 {
		t.Errorf("GOMAXPROCS %d while %d threads wait in recvmmsg, want %d (a P left idle)", got, len(pcs), procs+1)
	}
	idle := time.Now()
	cancel()
	select {
	case err := <-done:
		if err != nil && !errors.Is(err, context.Canceled) {
			t.Errorf("Run: %v", err)
		}
	case <-time.After(time.Minute):
		t.Fatalf("Run still blocked %v after its context ended: the reads were not woken", time.Since(idle))
	}
	if got := runtime.GOMAXPROCS(0); got != procs {
		t.Errorf("GOMAXPROCS %d after Run returned, want %d again", got, procs)
	}
	// The port is free again: every descriptor of it was closed.
	pc, err := net.ListenPacket("udp", pcs[0].LocalAddr().String())
	if err != nil {
		t.Fatalf("port still held after Run: %v", err)
	}
	pc.Close()
}

// TestSockaddrAddrPort: the sender's address as recvmmsg gives it.
func TestSockaddrAddrPort(t *testing.T) {
	v4 := make([]byte, unix.SizeofSockaddrInet4)
	v4[0], v4[1] = byte(unix.AF_INET), 0 // little-endian family, as on amd64 and arm64
	v4[2], v4[3] = 0x12, 0x34
	copy(v4[4:], []byte{192, 0, 2, 7})
	v6 := make([]byte, unix.SizeofSockaddrInet6)
	v6[0] = byte(unix.AF_INET6)
	v6[2], v6[3] = 0, 53
	copy(v6[8:], netip.MustParseAddr("2001:db8::1").AsSlice())
	scoped := append([]byte(nil), v6...)
	copy(scoped[8:], netip.MustParseAddr("fe80::1").AsSlice())
	scoped[24] = 3
	for _, c := range []struct {
		name string
		sa   []byte
		want string
	}{
		{"v4", v4, "192.0.2.7:4660"},
		{"v6", v6, "[2001:db8::1]:53"},
		{"v6 scoped", scoped, "[fe80::1%3]:53"},
		{"v4 cut short", v4[:8], "invalid AddrPort"},
		{"v6 cut short", v6[:20], "invalid AddrPort"},
		{"empty", nil, "invalid AddrPort"},
		{"other family", []byte{1, 0, 0, 0}, "invalid AddrPort"},
	} {
		t.Run(c.name, func(t *testing.T) {
			if got := sockaddrAddrPort(c.sa).String(); got != c.want {
				t.Errorf("got %s, want %s", got, c.want)
			}
		})
	}
}
