package redis

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/cnsd/cnsd/store"
	"github.com/cnsd/cnsd/store/redistest"
)

// The writer child of TestRedisWriterFailover: the test binary run again
// with these variables set runs TestHelperWriter as a writer process.
const (
	helperURLEnv = "CNSD_TEST_REDIS_WRITER_URL"
	helperIDEnv  = "CNSD_TEST_REDIS_WRITER_ID"
	// helperTTLEnv, when set, is the lease TTL of the writer child
	// instead of failoverTTL (a time.Duration string).
	helperTTLEnv = "CNSD_TEST_REDIS_WRITER_TTL"
	// failoverTTL is short so the test is quick, but not so short that
	// a busy machine starving the renewing goroutine for a moment makes
	// the lease change hands before the writer is killed.
	failoverTTL  = 3 * time.Second
	failoverZone = "failover.example."
)

// TestHelperWriter is not a test: it is the body of the writer processes
// TestRedisWriterFailover starts. It prints "acquired <epoch>" and then
// "commit <epoch> <serial>" for every commit, until it is killed.
func TestHelperWriter(t *testing.T) {
	url := os.Getenv(helperURLEnv)
	if url == "" {
		return
	}
	err := runRedisHelperWriter(context.Background(), url, os.Getenv(helperIDEnv))
	fmt.Printf("exit %v\n", err)
	os.Exit(3)
}

func runRedisHelperWriter(ctx context.Context, url, id string) error {
	ttl := failoverTTL
	if v := os.Getenv(helperTTLEnv); v != "" {
		var err error
		if ttl, err = time.ParseDuration(v); err != nil {
			return fmt.Errorf("%s=%q: %w", helperTTLEnv, v, err)
		}
	}
	r, err := Open(ctx, url, Options{LeaseTTL: ttl, ID: id})
	if err != nil {
		return err
	}
	epoch, err := r.Acquire(ctx)
	if err != nil {
		return err
	}
	fmt.Printf("acquired %d\n", epoch)
	lost := make(chan error, 1)
	go func() { lost <- r.Keep(ctx, epoch) }()
	var serial store.Serial
	for {
		select {
		case err := <-lost:
			return fmt.Errorf("lease lost: %w", err)
		default:
		}
		if serial == 0 {
			if serial, err = redisHelperSerial(ctx, r, epoch); err != nil {
				return err
			}
		}
		c := store.ZoneChange{Zone: failoverZone, Prev: serial, Next: serial + 1, KeepJournal: 10,
			Diff: store.Diff{Zone: failoverZone, From: serial, To: serial + 1}}
		switch err := r.Apply(ctx, epoch, []store.ZoneChange{c}); {
		case errors.Is(err, store.ErrConflict):
			serial = 0 // reload
		case err != nil:
			return err
		default:
			serial++
			fmt.Printf("commit %d %d\n", epoch, serial)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// redisHelperSerial is the zone's current serial, or 1000 to start it at.
func redisHelperSerial(ctx context.Context, r *Backend, epoch uint64) (store.Serial, error) {
	zones, err := r.Load(ctx, nil)
	if err != nil {
		return 0, err
	}
	if z := zones[failoverZone]; z != nil {
		return z.Serial, nil
	}
	return 1000, r.Apply(ctx, epoch, []store.ZoneChange{{Zone: failoverZone, Next: 1000, KeepJournal: 10,
		Diff: store.Diff{Zone: failoverZone, To: 1000}}})
}

// redisWriterEvent is one line a writer child printed.
type redisWriterEvent struct {
	child         int
	what          string // acquired, commit, exit
	epoch, serial uint64
	line          string
}

func startRedisWriter(t testing.TB, url string, child int, events chan<- redisWriterEvent, env ...string) *exec.Cmd {
	cmd := exec.Command(os.Args[0], "-test.run=^TestHelperWriter$", "-test.count=1")
	cmd.Env = append(os.Environ(), helperURLEnv+"="+url, helperIDEnv+"=writer"+strconv.Itoa(child))
	cmd.Env = append(cmd.Env, env...)
	cmd.Stderr = os.Stderr
	out, err := cmd.StdoutPipe()
	redisMust(t, err)
	redisMust(t, cmd.Start())
	t.Cleanup(func() {
		_ = cmd.Process.Kill() // may be dead already
		_ = cmd.Wait()
	})
	go func() {
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			f := strings.Fields(sc.Text())
			if len(f) == 0 {
				continue
			}
			ev := redisWriterEvent{child: child, what: f[0], line: sc.Text()}
			if len(f) > 1 {
				ev.epoch, _ = strconv.ParseUint(f[1], 10, 64)
			}
			if len(f) > 2 {
				ev.serial, _ = strconv.ParseUint(f[2], 10, 64)
			}
			events <- ev
		}
	}()
	return cmd
}

func TestRedisWriterFailover(t *testing.T) {
	srv := redistest.Start(t)
	events := make(chan redisWriterEvent, 1000)
	cmds := []*exec.Cmd{startRedisWriter(t, srv.URL(), 0, events), startRedisWriter(t, srv.URL(), 1, events)}

	first := waitRedisWriter(t, events, -1, "acquired", 30*time.Second)
	last := waitRedisCommits(t, events, first.child, first.epoch, 3)
	killed := time.Now()
	redisMust(t, cmds[first.child].Process.Kill())
	other := 1 - first.child

	second := waitRedisWriter(t, events, other, "acquired", failoverTTL+failoverTTL/3+2*time.Second)
	took := time.Since(killed)
	if second.epoch <= first.epoch {
		t.Fatalf("new writer's epoch %d, not above the dead one's %d", second.epoch, first.epoch)
	}
	next := waitRedisCommits(t, events, other, second.epoch, 3)
	if next.serial <= last.serial {
		t.Fatalf("new writer committed serial %d, not after %d", next.serial, last.serial)
	}
	t.Logf("writer %d (epoch %d) killed after serial %d; writer %d took over with epoch %d after %v, reached serial %d",
		first.child, first.epoch, last.serial, other, second.epoch, took.Round(time.Millisecond), next.serial)

	// The dead writer's epoch is fenced, from any client.
	third := openRedisAt(t, srv.URL(), Options{})
	zones, err := third.Load(context.Background(), nil)
	redisMust(t, err)
	s := zones[failoverZone].Serial
	stale := store.ZoneChange{Zone: failoverZone, Prev: s, Next: s + 1, KeepJournal: 10,
		Diff: store.Diff{Zone: failoverZone, From: s, To: s + 1}}
	if err := third.Apply(context.Background(), first.epoch, []store.ZoneChange{stale}); !errors.Is(err, store.ErrFenced) {
		t.Fatalf("Apply with the dead writer's epoch %d = %v, want ErrFenced", first.epoch, err)
	}
}

// waitRedisWriter waits for an event of kind what from child (-1: any child).
func waitRedisWriter(t testing.TB, events <-chan redisWriterEvent, child int, what string, limit time.Duration) redisWriterEvent {
	t.Helper()
	timeout := time.After(limit)
	for {
		select {
		case ev := <-events:
			if ev.what == "exit" {
				t.Fatalf("writer %d: %s", ev.child, ev.line)
			}
			if ev.what == what && (child < 0 || ev.child == child) {
				return ev
			}
		case <-timeout:
			t.Fatalf("no %q from writer %d within %v", what, child, limit)
		}
	}
}

// waitRedisCommits waits for n commits by child with epoch and returns the last.
func waitRedisCommits(t testing.TB, events <-chan redisWriterEvent, child int, epoch uint64, n int) redisWriterEvent {
	t.Helper()
	var ev redisWriterEvent
	for range n {
		ev = waitRedisWriter(t, events, child, "commit", 10*time.Second)
		if ev.epoch != epoch {
			t.Fatalf("writer %d committed with epoch %d, holds %d", child, ev.epoch, epoch)
		}
	}
	return ev
}
