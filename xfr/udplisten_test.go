package xfr

import (
	"context"
	"errors"
	"fmt"
	"net"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/miekg/dns"
)

// TestListenUDPShared: sockets sharing an address (ListenUDP), a worker
// each (reading with blocking system calls on Linux), answer every query of many clients — whichever socket the kernel
// gives each client to — from the address it was sent to, and Run
// returns once the context ends, the sockets closed.
func TestListenUDPShared(t *testing.T) {
	for _, c := range []struct {
		name, listen string
		dst          net.IP // where the clients send, on the bound port
	}{
		{"one address", "127.0.0.1:0", net.IPv4(127, 0, 0, 1)},
		// Bound to the unspecified address, each socket answers from the
		// address its query was sent to (IP_PKTINFO).
		{"wildcard", "0.0.0.0:0", net.IPv4(127, 0, 0, 2)},
	} {
		t.Run(c.name, func(t *testing.T) {
			want := max(4, runtime.GOMAXPROCS(0)) // a worker each
			pcs, err := ListenUDP(context.Background(), c.listen, want)
			if err != nil {
				t.Fatal(err)
			}
			if !reusePortSpreads {
				want = 1
			}
			if len(pcs) != want || len(udpGroups(pcs)) != 1 {
				t.Fatalf("ListenUDP gave %d sockets in %d groups, want %d in one", len(pcs), len(udpGroups(pcs)), want)
			}
			port := pcs[0].LocalAddr().(*net.UDPAddr).Port
			s := New(testConfig(t, `, "rrl": {"disabled": true}`), transportStore(t), Options{PacketConns: pcs}, nil)
			ctx, cancel := context.WithCancel(context.Background())
			done := make(chan error, 1)
			go func() { done <- s.Run(ctx) }()
			askMany(t, &net.UDPAddr{IP: c.dst, Port: port}, 32, 8)
			cancel()
			if err := <-done; err != nil && !errors.Is(err, context.Canceled) {
				t.Errorf("Run: %v", err)
			}
			for i, pc := range pcs {
				if _, _, err := pc.ReadFrom(make([]byte, 1)); !errors.Is(err, net.ErrClosed) {
					t.Errorf("socket %d after Run: %v, want closed", i, err)
				}
			}
		})
	}
}

// askMany sends queries from clients sockets of their own (so that the
// kernel spreads them over the sockets sharing the server's address),
// each asking perClient names, and fails unless every one is answered,
// from dst, with its records. A query is sent again until answered: the
// test is about answers, not about loss on a busy machine.
func askMany(t *testing.T, dst *net.UDPAddr, clients, perClient int) {
	t.Helper()
	var wg sync.WaitGroup
	for c := range clients {
		wg.Go(func() {
			conn, err := net.DialUDP("udp", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)}, dst)
			if err != nil {
				t.Error(err)
				return
			}
			defer conn.Close()
			buf := make([]byte, 1500)
			for i := range perClient {
				id := uint16(c*perClient + i + 1)
				name := fmt.Sprintf("vm%04d.example.test.", int(id)%1000)
				q, _ := query(name, id).Pack()
				if !askUntilAnswered(t, conn, q, id, dst, buf) {
					return
				}
			}
		})
	}
	wg.Wait()
}

// askUntilAnswered sends q until the answer with id comes, up to 50
// times, and checks it.
func askUntilAnswered(t *testing.T, conn *net.UDPConn, q []byte, id uint16, dst *net.UDPAddr, buf []byte) bool {
	for range 50 {
		if _, err := conn.Write(q); err != nil {
			t.Error(err)
			return false
		}
		_ = conn.SetReadDeadline(time.Now().Add(200 * time.Millisecond))
		for {
			n, from, err := conn.ReadFromUDP(buf)
			if err != nil {
				break // sent again
			}
			m := new(dns.Msg)
			if m.Unpack(buf[:n]) != nil || m.Id != id {
				continue
			}
			if len(m.Answer) != 1 || m.Rcode != dns.RcodeSuccess || !from.IP.Equal(dst.IP) {
				t.Errorf("answer %d from %v: %v", id, from, m)
			}
			return true
		}
	}
	t.Errorf("query %d never answered", id)
	return false
}

// TestSecondServerOnAddressFails: sharing a UDP address between sockets
// does not let a second server start on an address a first one serves —
// its TCP listener finds the port taken — and the first goes on
// answering every query.
func TestSecondServerOnAddressFails(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	cfg := testConfig(t, fmt.Sprintf(`, "rrl": {"disabled": true}, "dns": {"listen": [%q]}`, addr))
	first := New(cfg, transportStore(t), Options{}, nil)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- first.Run(ctx) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil && !errors.Is(err, context.Canceled) {
			t.Errorf("first Run: %v", err)
		}
	})
	for deadline := time.Now().Add(10 * time.Second); ; { // until the first has bound its sockets
		c, err := net.Dial("tcp", addr)
		if err == nil {
			c.Close()
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the first server does not listen on %s: %v", addr, err)
		}
		time.Sleep(10 * time.Millisecond)
	}
	dst, _ := net.ResolveUDPAddr("udp", addr)
	askMany(t, dst, 2, 2)

	second := New(cfg, transportStore(t), Options{}, nil)
	ctx2, cancel2 := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel2()
	err = second.Run(ctx2)
	if err == nil || errors.Is(err, context.DeadlineExceeded) || !strings.Contains(err.Error(), "address already in use") {
		t.Fatalf("second Run on %s: %v, want address already in use", addr, err)
	}
	askMany(t, dst, 8, 4) // every query still answered, none by the second
}
