package store

import (
	"context"
	"maps"
	"net"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/cnsd/cnsd/store/redistest"
)

// TestRedisWriteBackAfterFailoverToAStaleServer: the writer's address
// comes to lead to another Redis holding an older copy of the data (as
// when Sentinel promotes a replica that missed the last commits, or a
// restarted master serves an old append-only file before it is demoted).
// Verify finds the zones behind and writes them back through the real
// apply script: no served serial goes back, and the stale server ends up
// holding exactly what the writer serves, at higher serials.
func TestRedisWriteBackAfterFailoverToAStaleServer(t *testing.T) {
	ctx := context.Background()
	master := redistest.Start(t, redistest.WithArgs("--repl-diskless-sync-delay", "0"))
	stale := redistest.Start(t)
	proxy := startSwitchProxy(t, master.Addr())
	r := openRedisAt(t, "redis://"+proxy.addr())
	s, clk := open(t, r, Options{})
	commit(t, s, contrib("vm1", map[string][]Record{zoneFwd: {fwd("vm1", "one", "192.0.2.1")}}))

	// The stale server takes a copy of the master as it is now.
	sc := redis.NewClient(&redis.Options{Addr: stale.Addr()})
	defer sc.Close()
	host, port, _ := net.SplitHostPort(master.Addr())
	if err := sc.ReplicaOf(ctx, host, port).Err(); err != nil {
		t.Fatal(err)
	}
	waitFor(t, func() bool {
		info, _ := sc.Info(ctx, "replication").Result()
		// The zone's serial key (store/redis/keys.go).
		got, _ := sc.Get(ctx, "{cnsd:z:"+zoneFwd+"}:serial").Result()
		return strings.Contains(info, "master_link_status:up") && got != ""
	}, "copy to the stale server")
	if err := sc.ReplicaOf(ctx, "NO", "ONE").Err(); err != nil {
		t.Fatal(err)
	}
	waitFor(t, func() bool {
		info, _ := sc.Info(ctx, "replication").Result()
		return strings.Contains(info, "role:master")
	}, "the stale server a master")

	clk.Set(t0.Add(time.Minute))
	commit(t, s, contrib("vm2", map[string][]Record{zoneFwd: {fwd("vm2", "two", "192.0.2.2")}}))
	commit(t, s, contrib("vm3", map[string][]Record{zoneRev: {ptr("3."+zoneRev, "three."+zoneFwd, "vm3")}}))
	before := servedSerials(s)

	proxy.switchTo(stale.Addr())
	var found []string
	waitFor(t, func() bool {
		f, err := s.Verify(ctx)
		found = append(found, f...)
		return err == nil && len(f) == 0 && len(found) > 0
	}, "Verify writes the zones back")
	if got := slices.Compact(slices.Sorted(slices.Values(found))); !slices.Equal(got, []string{zoneRev, zoneFwd}) {
		t.Errorf("Verify found %v behind, want [%s %s]", got, zoneRev, zoneFwd)
	}
	after := servedSerials(s)
	for z := range before {
		if !before[z].Less(after[z]) {
			t.Errorf("zone %s at %d after the write-back, want above %d", z, after[z], before[z])
		}
	}
	requireBackendServes(t, r, s)
	commit(t, s, contrib("vm4", map[string][]Record{zoneFwd: {fwd("vm4", "four", "192.0.2.4")}}))
	fresh, _ := open(t, openRedisAt(t, stale.URL()), Options{})
	if got, want := servedSerials(fresh), servedSerials(s); !maps.Equal(got, want) {
		t.Errorf("a store opened on the stale server serves %v, the writer %v", got, want)
	}
	if n := len(all(fresh, zoneFwd)); n != 3 {
		t.Errorf("the stale server holds %d records of %s, want 3", n, zoneFwd)
	}
}

// switchProxy forwards TCP connections to a target that switchTo
// changes, closing the connections to the old one: a failover behind one
// address.
type switchProxy struct {
	ln     net.Listener
	mu     sync.Mutex // guards target and conns
	target string
	conns  []net.Conn
}

func startSwitchProxy(t *testing.T, target string) *switchProxy {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &switchProxy{ln: ln, target: target}
	t.Cleanup(func() { ln.Close(); p.closeAll() })
	go p.serve()
	return p
}

func (p *switchProxy) addr() string { return p.ln.Addr().String() }

func (p *switchProxy) serve() {
	for {
		client, err := p.ln.Accept()
		if err != nil {
			return
		}
		p.mu.Lock()
		server, err := net.Dial("tcp", p.target)
		if err != nil {
			p.mu.Unlock()
			client.Close()
			continue
		}
		p.conns = append(p.conns, client, server)
		p.mu.Unlock()
		go pipe(client, server)
		go pipe(server, client)
	}
}

func pipe(dst, src net.Conn) {
	buf := make([]byte, 64<<10)
	for {
		n, err := src.Read(buf)
		if n > 0 {
			if _, werr := dst.Write(buf[:n]); werr != nil {
				break
			}
		}
		if err != nil {
			break
		}
	}
	dst.Close()
	src.Close()
}

func (p *switchProxy) switchTo(target string) {
	p.mu.Lock()
	p.target = target
	p.mu.Unlock()
	p.closeAll()
}

func (p *switchProxy) closeAll() {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, c := range p.conns {
		c.Close()
	}
	p.conns = nil
}
