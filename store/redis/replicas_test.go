package redis

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"testing"
	"time"

	"github.com/cnsd/cnsd/store"
	"github.com/cnsd/cnsd/store/redistest"
	"github.com/cnsd/cnsd/zonegen"
)

// replicatedStore is a writing Store on a master with one replica;
// nodes[1] is the replica.
func replicatedStore(t *testing.T) ([]*redistest.Server, *Backend, *store.Store) {
	t.Helper()
	nodes := redistest.StartReplicated(t, 1)
	// Long enough for a loaded machine to ack a healthy replica's write;
	// each stalled commit waits this long.
	r := openRedisAt(t, nodes[0].URL(), Options{ReplicaTimeout: 2 * time.Second})
	epoch, err := r.Acquire(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	s := openStore(t, r, store.Options{Epoch: epoch})
	return nodes, r, s
}

// TestRedisCommitHeldUntilReplicaAcknowledges: with the master's only
// replica stalled, a commit is written but neither published nor
// signalled to watchers (no NOTIFY), however often it is retried; once
// the replica is back the retry publishes it, and the replica has it.
func TestRedisCommitHeldUntilReplicaAcknowledges(t *testing.T) {
	ctx := context.Background()
	nodes, r, s := replicatedStore(t)
	zone := "held.example."
	vm := func(ip string) zonegen.Contribution {
		return contribIn("vm1", zone, redisA(zone, "web", ip, "vm1"))
	}
	commit(t, s, vm("10.0.0.1"))
	if d := r.Durability(); d.Replicas != 1 {
		t.Fatalf("Durability().Replicas = %d, want 1", d.Replicas)
	}
	first := s.Snapshot(zone).Serial()
	w := s.Watch()
	defer s.Unwatch(w)

	nodes[1].Pause()
	for try := range 3 {
		if _, err := s.Commit(ctx, []zonegen.Contribution{vm("10.0.0.2")}); !errors.Is(err, store.ErrNotReplicated) {
			t.Fatalf("commit %d with the replica stalled: %v, want ErrNotReplicated", try, err)
		}
		if got := s.Snapshot(zone).Serial(); got != first {
			t.Fatalf("commit %d with the replica stalled published serial %d (was %d)", try, got, first)
		}
		select {
		case <-w:
			t.Fatalf("commit %d with the replica stalled signalled the watchers", try)
		default:
		}
	}
	if got := r.CommitsHeld(); got != 3 {
		t.Errorf("CommitsHeld() = %d, want 3", got)
	}

	nodes[1].Resume()
	diffs, err := s.Commit(ctx, []zonegen.Contribution{vm("10.0.0.3")})
	if err != nil {
		t.Fatalf("commit with the replica back: %v", err)
	}
	if len(diffs) != 2 {
		t.Fatalf("commit with the replica back returned %d diffs, want 2 (the held commit's, then its own)", len(diffs))
	}
	held, last := diffs[0], diffs[1]
	if held.From != first || held.To != last.From || !first.Less(last.To) {
		t.Fatalf("diffs %d→%d then %d→%d, want a chain from %d", held.From, held.To, last.From, last.To, first)
	}
	if got := s.Snapshot(zone).Serial(); got != last.To {
		t.Fatalf("published serial %d, want %d", got, last.To)
	}
	select {
	case <-w:
	default:
		t.Fatal("the confirmed commit did not signal the watchers")
	}
	onReplica, err := redistest.Get(nodes[1], zoneKeys(zone).serial)
	if err != nil || onReplica != strconv.FormatUint(uint64(last.To), 10) {
		t.Fatalf("the replica has serial %q (%v), want %d", onReplica, err, last.To)
	}
}

// TestRedisNoWaitWithoutReplicas: a master without replicas is never
// waited for, and one that loses its only replica stops being waited for
// after the first commit no replica acknowledged.
func TestRedisNoWaitWithoutReplicas(t *testing.T) {
	ctx := context.Background()
	nodes, r, s := replicatedStore(t)
	zone := "alone.example."
	vm := func(ip string) zonegen.Contribution {
		return contribIn("vm1", zone, redisA(zone, "web", ip, "vm1"))
	}
	commit(t, s, vm("10.0.0.1"))
	nodes[1].Kill()
	// The master may notice the closed link only after a moment; until
	// then a commit is held, never published unacknowledged.
	deadline := time.Now().Add(10 * time.Second)
	for {
		_, err := s.Commit(ctx, []zonegen.Contribution{vm("10.0.0.2")})
		if err == nil {
			break
		}
		if !errors.Is(err, store.ErrNotReplicated) || time.Now().After(deadline) {
			t.Fatalf("commit after the replica died: %v", err)
		}
	}
	if d := r.Durability(); d.Replicas != 0 {
		t.Errorf("Durability().Replicas = %d after the replica died, want 0", d.Replicas)
	}
	held := r.CommitsHeld()
	commit(t, s, vm("10.0.0.3"))
	if got := r.CommitsHeld(); got != held {
		t.Errorf("CommitsHeld() went from %d to %d on a master without replicas", held, got)
	}
}

// BenchmarkRedisCommitReplicas measures a Store commit of one changed VM
// on a master without replicas (no WAIT) and with one (WAIT 1 after the
// scripts), all on loopback: the difference is what waiting for the
// replica costs per commit.
func BenchmarkRedisCommitReplicas(b *testing.B) {
	for _, replicas := range []int{0, 1} {
		b.Run(fmt.Sprintf("replicas=%d", replicas), func(b *testing.B) {
			ctx := context.Background()
			nodes := redistest.StartReplicated(b, replicas)
			r := openRedisAt(b, nodes[0].URL(), Options{})
			epoch, err := r.Acquire(ctx)
			if err != nil {
				b.Fatal(err)
			}
			s := openStore(b, r, store.Options{Epoch: epoch})
			zone := "bench.example."
			i := 0
			for b.Loop() {
				i++
				vm := fmt.Sprintf("vm%d", i%100)
				ip := fmt.Sprintf("10.0.%d.%d", i/256%256, i%256)
				commit(b, s, contribIn(vm, zone, redisA(zone, vm, ip, vm)))
			}
			if got := r.Durability().Replicas; got != replicas {
				b.Fatalf("Durability().Replicas = %d, want %d", got, replicas)
			}
		})
	}
}
