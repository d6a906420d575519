package conformance

import (
	"net"
	"sync"
	"testing"
	"time"

	"github.com/miekg/dns"
)

// notifyCatcher is a peer of changedZone that keeps every NOTIFY cnsd
// sends it and answers it as a secondary would. Other queries (cnsd's SOA
// polls) it passes on to cnsd, so that it always looks current.
type notifyCatcher struct {
	pc       net.PacketConn
	upstream string // cnsd, set once it listens

	mu sync.Mutex // guards got and upstream reads after start
	// got are the NOTIFY messages received, oldest first.
	got []*dns.Msg
}

// catchNotify listens on 127.0.0.1 until the test ends.
func catchNotify(t *testing.T) *notifyCatcher {
	t.Helper()
	pc, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	c := &notifyCatcher{pc: pc}
	done := make(chan struct{})
	go func() {
		defer close(done)
		c.serve()
	}()
	t.Cleanup(func() {
		pc.Close()
		<-done
	})
	return c
}

func (c *notifyCatcher) addr() string { return peer(addrPort(c.pc.LocalAddr())) }

func (c *notifyCatcher) setUpstream(addr string) {
	c.mu.Lock()
	c.upstream = addr
	c.mu.Unlock()
}

func (c *notifyCatcher) serve() {
	buf := make([]byte, 65535)
	for {
		n, from, err := c.pc.ReadFrom(buf)
		if err != nil {
			return
		}
		m := new(dns.Msg)
		if m.Unpack(buf[:n]) != nil {
			continue
		}
		var reply *dns.Msg
		if m.Opcode == dns.OpcodeNotify {
			c.mu.Lock()
			c.got = append(c.got, m)
			c.mu.Unlock()
			reply = new(dns.Msg).SetReply(m)
			reply.Authoritative = true
		} else {
			c.mu.Lock()
			up := c.upstream
			c.mu.Unlock()
			if up == "" {
				continue
			}
			r, _, err := (&dns.Client{Timeout: time.Second}).Exchange(m, up)
			if err != nil {
				continue
			}
			reply = r
		}
		if out, err := reply.Pack(); err == nil {
			_, _ = c.pc.WriteTo(out, from)
		}
	}
}

// count is how many NOTIFY messages have been received.
func (c *notifyCatcher) count() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.got)
}

// wait returns the first NOTIFY about zone received after the first
// from, or nil after timeout.
func (c *notifyCatcher) wait(zone string, from int, timeout time.Duration) *dns.Msg {
	for deadline := time.Now().Add(timeout); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		c.mu.Lock()
		for _, m := range c.got[min(from, len(c.got)):] {
			if len(m.Question) == 1 && dns.CanonicalName(m.Question[0].Name) == zone {
				c.mu.Unlock()
				return m
			}
		}
		c.mu.Unlock()
	}
	return nil
}
