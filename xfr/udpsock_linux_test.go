package xfr

import (
	"bytes"
	"context"
	"encoding/binary"
	"fmt"
	"log/slog"
	"net"
	"os"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/miekg/dns"
)

// TestUDPBuffers: the configured socket buffers are asked for, and what
// the kernel granted is logged; as root (SO_RCVBUFFORCE) that is all of
// it.
func TestUDPBuffers(t *testing.T) {
	pc, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var logs bytes.Buffer
	s := New(testConfig(t, `, "dns": {"udp_receive_buffer": 3145728, "udp_send_buffer": 1048576}`),
		testStore(t, nil), Options{PacketConns: []net.PacketConn{pc}}, slog.New(slog.NewTextHandler(&logs, nil)))
	if _, err := s.newUDP(pc); err != nil {
		t.Fatal(err)
	}
	defer pc.Close()
	line := logs.String()
	if !strings.Contains(line, `msg="UDP socket buffers"`) || !strings.Contains(line, "receive_requested=3145728") {
		t.Fatalf("log: %s", line)
	}
	rc, _ := pc.(*net.UDPConn).SyscallConn()
	var rcv, snd int
	_ = rc.Control(func(fd uintptr) {
		rcv, _ = syscall.GetsockoptInt(int(fd), syscall.SOL_SOCKET, syscall.SO_RCVBUF)
		snd, _ = syscall.GetsockoptInt(int(fd), syscall.SOL_SOCKET, syscall.SO_SNDBUF)
	})
	if !strings.Contains(line, fmt.Sprintf("receive_granted=%d ", rcv/2)) || !strings.Contains(line, fmt.Sprintf("send_granted=%d", snd/2)) {
		t.Errorf("log %s does not say what getsockopt says: %d, %d", line, rcv, snd)
	}
	if os.Geteuid() == 0 && (rcv < 2*3145728 || snd < 2*1048576) {
		t.Errorf("as root: SO_RCVBUF %d, SO_SNDBUF %d (Linux reports double), want 3 MiB and 1 MiB granted", rcv, snd)
	}
}

// TestUDPDropsCounted: queries the kernel drops while the reader is held
// up, the receive buffer full, are counted from the drop count the next
// datagram carries: on a socket alone, and on sockets sharing an address
// (ListenUDP, GOMAXPROCS of them), each read by its worker with blocking
// reads (udpblock_linux.go).
func TestUDPDropsCounted(t *testing.T) {
	t.Run("alone", func(t *testing.T) {
		release := make(chan struct{})
		addr, s := startTransport(t, `, "dns": {"udp_receive_buffer": 65536}`, transportStore(t), Options{},
			func(s *Server) {
				s.udpReadHook = func() { <-release }
			})
		floodUntilDropped(t, addr, s, release)
	})
	t.Run("shared", func(t *testing.T) {
		pcs, err := ListenUDP(context.Background(), "127.0.0.1:0", runtime.GOMAXPROCS(0))
		if err != nil {
			t.Fatal(err)
		}
		release := make(chan struct{})
		s := New(testConfig(t, `, "rrl": {"disabled": true}, "dns": {"udp_receive_buffer": 65536}`),
			transportStore(t), Options{PacketConns: pcs}, nil)
		s.udpReadHook = func() { <-release }
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan error, 1)
		go func() { done <- s.Run(ctx) }()
		defer func() { cancel(); <-done }()
		floodUntilDropped(t, pcs[0].LocalAddr().String(), s, release)
	})
}

// floodUntilDropped floods addr with queries while the server's readers
// wait for release, then releases them and checks that drops were
// counted.
func floodUntilDropped(t *testing.T, addr string, s *Server, release chan struct{}) {
	c, err := net.Dial("udp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	q, _ := query("vm0001.example.test.", 1).Pack()
	for range 3000 { // the buffer holds a few hundred at most
		if _, err := c.Write(q); err != nil {
			t.Fatal(err)
		}
	}
	close(release)
	// The reader drains the buffer; a query sent before it has room is
	// dropped too, so it is sent until answered.
	last, _ := query("vm0002.example.test.", 2).Pack()
	buf := make([]byte, 1500)
	for answered, deadline := false, time.Now().Add(5*time.Second); !answered; {
		if time.Now().After(deadline) {
			t.Fatal("no answer to a query after the flood")
		}
		if _, err := c.Write(last); err != nil {
			t.Fatal(err)
		}
		_ = c.SetReadDeadline(time.Now().Add(100 * time.Millisecond))
		for {
			n, err := c.Read(buf)
			if err != nil {
				break
			}
			m := new(dns.Msg)
			if m.Unpack(buf[:n]) == nil && m.Id == 2 {
				answered = true
				break
			}
		}
	}
	if d := s.TransportCounts().UDPDropped; d == 0 {
		t.Errorf("UDPDropped = %d, want some of the 3000 flooded (and of the queries after)", d)
	}
}

// TestUDPWildcardAnswersFrom: a socket bound to 0.0.0.0 answers from the
// address the query was sent to (IP_PKTINFO), here 127.0.0.2 rather than
// the 127.0.0.1 the route would pick.
func TestUDPWildcardAnswersFrom(t *testing.T) {
	pc, err := net.ListenPacket("udp", "0.0.0.0:0")
	if err != nil {
		t.Fatal(err)
	}
	port := pc.LocalAddr().(*net.UDPAddr).Port
	s := New(testConfig(t, ""), transportStore(t), Options{PacketConns: []net.PacketConn{pc}}, nil)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- s.Run(ctx) }()
	t.Cleanup(func() { cancel(); <-done })
	c, err := net.DialUDP("udp", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)}, &net.UDPAddr{IP: net.IPv4(127, 0, 0, 2), Port: port})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	q, _ := query("vm0001.example.test.", 9).Pack()
	_ = c.SetDeadline(time.Now().Add(2 * time.Second))
	if _, err := c.Write(q); err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 1500)
	n, from, err := c.ReadFromUDP(buf)
	if err != nil {
		t.Fatalf("no answer from 127.0.0.2: %v", err)
	}
	m := new(dns.Msg)
	if err := m.Unpack(buf[:n]); err != nil || m.Id != 9 || len(m.Answer) != 1 || !from.IP.Equal(net.IPv4(127, 0, 0, 2)) {
		t.Errorf("answer from %v: %v %v", from, m, err)
	}
}

// TestUDPDropsSummed: each socket's drop count (SO_RXQ_OVFL) is its own,
// counted from zero; the server's count is the sum of what each socket
// added since its last report.
func TestUDPDropsSummed(t *testing.T) {
	s := New(testConfig(t, ""), transportStore(t), Options{}, nil)
	a, b := &udpServer{s: s}, &udpServer{s: s}
	report := func(u *udpServer, n uint32) {
		var d [4]byte
		binary.NativeEndian.PutUint32(d[:], n)
		p := &udpPacket{}
		p.oobn = copy(p.oob[:], appendCmsg(nil, syscall.SOL_SOCKET, syscall.SO_RXQ_OVFL, d[:]))
		u.countDrops(p)
	}
	report(a, 5)
	report(b, 3)
	report(a, 7) // 2 more on a
	report(b, 3) // none more on b
	report(a, 7)
	if got := s.TransportCounts().UDPDropped; got != 10 {
		t.Errorf("UDPDropped = %d, want 5+3+2", got)
	}
}
