package redis

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/cnsd/cnsd/store"
	"github.com/cnsd/cnsd/store/redistest"
	"github.com/cnsd/cnsd/zonegen"
)

// sentinelZones are the zones the churn of TestRedisSentinelFailover
// writes, each VM to one of them.
var sentinelZones = []string{"a.sentinel.example.", "b.sentinel.example."}

// TestRedisSentinelFailover: a writer commits under churn through the
// Sentinel client; the replica stalls for a moment (so commits are held
// for want of an acknowledgement) and the master is killed meanwhile.
// Sentinel promotes the replica, the writer goes on on it (confirming the
// held commit there), and: no zone was ever published with a serial
// below one published before, and what the new master holds at the end
// is what the writer published, with every VM's last records.
//
// On loopback the stalled replica still receives everything the master
// sent before it died (it waits in the socket), so this test would pass
// without WAIT too; TestRedisCommitHeldUntilReplicaAcknowledges is the
// one that fails when a commit is published unacknowledged.
func TestRedisSentinelFailover(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	set := redistest.StartSentinel(t, 1)
	r := openRedisAt(t, set.URL(), Options{LeaseTTL: 10 * time.Second, ReplicaTimeout: 300 * time.Millisecond})
	epoch, err := r.Acquire(ctx)
	if err != nil {
		t.Fatal(err)
	}
	kept := make(chan error, 1)
	go func() { kept <- r.Keep(ctx, epoch) }()
	s, err := store.Open(ctx, r, store.Options{Epoch: epoch}, nil)
	if err != nil {
		t.Fatal(err)
	}
	mon := watchSerials(ctx, s)
	b := store.NewBatcher(s, 5*time.Millisecond, 20*time.Millisecond, nil)
	go func() { _ = b.Run(ctx) }()
	churn := startChurn(b)

	waitCommits(t, b, 20)
	set.Nodes[1].Pause()
	// Commits pile up unreplicated until one has waited out
	// ReplicaTimeout and is held: a fixed 300 ms was sometimes not
	// enough on a loaded machine (CI), and the failover then had no held
	// commit to confirm.
	for deadline := time.Now().Add(10 * time.Second); r.CommitsHeld() == 0; time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("no commit was held within 10 s of the replica stalling")
		}
	}
	killed := time.Now()
	set.Nodes[0].Kill()
	set.Nodes[1].Resume()
	before := b.Commits()
	promoted := set.AwaitFailover(t, set.Nodes[0])
	waitCommits(t, b, before+1)
	t.Logf("failover seen by the writer: %v from SIGKILL of the master to the next commit (sentinel down-after 1 s); %s promoted",
		time.Since(killed).Round(10*time.Millisecond), promoted.Addr())
	waitCommits(t, b, b.Commits()+20)
	want := churn.stop()
	for b.Pending() > 0 {
		if err := b.Flush(ctx); err != nil {
			time.Sleep(50 * time.Millisecond)
		}
	}
	if r.CommitsHeld() == 0 {
		t.Error("no commit was held while the replica stalled; the failover did not exercise confirming a held commit")
	}
	select {
	case err := <-kept:
		t.Fatalf("the lease was lost: %v", err)
	default:
	}
	cancel()
	if err := mon.wait(); err != nil {
		t.Fatal(err)
	}

	fresh, err := store.Open(context.Background(), openRedisAt(t, set.URL(), Options{}), store.Options{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, zone := range sentinelZones {
		got, pub := fresh.Snapshot(zone), s.Snapshot(zone)
		if got.Serial() != pub.Serial() || got.Serial().Less(mon.max[zone]) {
			t.Errorf("zone %s: the new master holds serial %d, the writer published %d, at most %d", zone, got.Serial(), pub.Serial(), mon.max[zone])
		}
		if recs, exp := served(fresh, zone), expectedRecords(want, zone); !slices.Equal(recs, exp) {
			t.Errorf("zone %s on the new master:\n got %v\nwant %v", zone, recs, exp)
		}
	}
}

// churnVM is VM i's contribution at step n: an A record in one zone.
func churnVM(i, n int) zonegen.Contribution {
	zone := sentinelZones[i%len(sentinelZones)]
	vm := fmt.Sprintf("vm%02d", i)
	return contribIn(vm, zone, redisA(zone, vm, fmt.Sprintf("10.%d.%d.%d", i, n/256%256, n%256), vm))
}

// churn adds a changed VM to a Batcher every few milliseconds until
// stop, which returns every VM's last contribution.
type churn struct {
	stopped chan struct{}
	done    chan map[string]zonegen.Contribution
}

func startChurn(b *store.Batcher) *churn {
	c := &churn{stopped: make(chan struct{}), done: make(chan map[string]zonegen.Contribution)}
	go func() {
		last := map[string]zonegen.Contribution{}
		for n := 0; ; n++ {
			select {
			case <-c.stopped:
				c.done <- last
				return
			case <-time.After(2 * time.Millisecond):
			}
			vm := churnVM(n%20, n)
			last[vm.VM] = vm
			b.Add(vm)
		}
	}()
	return c
}

func (c *churn) stop() map[string]zonegen.Contribution {
	close(c.stopped)
	return <-c.done
}

// expectedRecords returns the records of zone in the contributions,
// sorted as all returns them.
func expectedRecords(cs map[string]zonegen.Contribution, zone string) []store.Record {
	var out []store.Record
	for _, vm := range slices.Sorted(maps.Keys(cs)) {
		for _, z := range cs[vm].Zones {
			if z.Zone == zone {
				out = append(out, z.Records...)
			}
		}
	}
	slices.SortFunc(out, store.Record.Compare)
	return out
}

// waitCommits waits until b has made n commits, failing after a minute.
func waitCommits(t *testing.T, b *store.Batcher, n int64) {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for b.Commits() < n {
		if time.Now().After(deadline) {
			t.Fatalf("%d commits after a minute, want %d", b.Commits(), n)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// serialMonitor records every zone's published serials as watchers see
// them and the first one below an earlier one.
type serialMonitor struct {
	mu   sync.Mutex
	max  map[string]store.Serial // zone → highest serial published
	err  error                   // first serial that went back
	done chan struct{}
}

func watchSerials(ctx context.Context, s *store.Store) *serialMonitor {
	m := &serialMonitor{max: map[string]store.Serial{}, done: make(chan struct{})}
	w := s.Watch()
	look := func() {
		m.mu.Lock()
		defer m.mu.Unlock()
		for _, zone := range s.Zones() {
			cur := s.Snapshot(zone)
			if cur == nil {
				continue
			}
			if prev, ok := m.max[zone]; ok && cur.Serial().Less(prev) && m.err == nil {
				m.err = fmt.Errorf("zone %s published serial %d after %d", zone, cur.Serial(), prev)
			}
			if prev, ok := m.max[zone]; !ok || prev.Less(cur.Serial()) {
				m.max[zone] = cur.Serial()
			}
		}
	}
	go func() {
		defer close(m.done)
		defer s.Unwatch(w)
		for {
			look()
			select {
			case <-ctx.Done():
				look()
				return
			case <-w:
			}
		}
	}()
	return m
}

// wait returns the monitor's finding once ctx has ended.
func (m *serialMonitor) wait() error {
	<-m.done
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.err
}
