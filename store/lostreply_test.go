package store

import (
	"context"
	"errors"
	"fmt"
	"net"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cnsd/cnsd/store/redistest"
	"github.com/cnsd/cnsd/zonegen"
)

// lostReply wraps a Backend whose next Apply writes the first `writes`
// zone changes of the batch and then fails, as a commit does whose reply
// is lost after the server wrote, or whose batch fails in one zone only.
type lostReply struct {
	Backend
	armed     bool
	writes    int
	failLoads int // Loads that fail before one succeeds
}

func (l *lostReply) Load(ctx context.Context, report func(string, error)) (map[string]*ZoneData, error) {
	if l.failLoads > 0 {
		l.failLoads--
		return nil, errors.New("injected: load failed")
	}
	return l.Backend.Load(ctx, report)
}

var errLostReply = errors.New("injected: reply lost")

func (l *lostReply) Apply(ctx context.Context, epoch uint64, changes []ZoneChange) error {
	if !l.armed {
		return l.Backend.Apply(ctx, epoch, changes)
	}
	l.armed = false
	if err := l.Backend.Apply(ctx, epoch, changes[:min(l.writes, len(changes))]); err != nil {
		return err
	}
	return errLostReply
}

// TestCommitAfterAmbiguousApply: when Apply fails after writing all or
// part of a batch, the Store takes the zones from the backend, readers see
// what is stored, and the retry of the batch and later commits succeed
// instead of conflicting forever.
func TestCommitAfterAmbiguousApply(t *testing.T) {
	const other = "example.net."
	tests := []struct {
		name             string
		writes, badLoads int
	}{
		{"nothing written", 0, 0},
		{"one zone of two written", 1, 0},
		{"everything written", 2, 0},
		{"everything written, the reload failing once", 2, 1},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			lb := &lostReply{Backend: NewMemory(), writes: tc.writes}
			s, _ := open(t, lb, Options{})
			r1, r2 := a("a.example.com.", "10.0.0.1", "vm1"), a("a.example.net.", "10.0.0.1", "vm1")
			commit(t, s, contrib("vm1", map[string][]Record{zone: {r1}}))
			batch := []zonegen.Contribution{contrib("vm1", map[string][]Record{zone: {r1}, other: {r2}}),
				contrib("vm2", map[string][]Record{zone: {a("b.example.com.", "10.0.0.2", "vm2")}})}
			lb.armed, lb.failLoads = true, tc.badLoads
			if _, err := s.Commit(context.Background(), batch); !errors.Is(err, errLostReply) {
				t.Fatalf("Commit = %v, want the injected error", err)
			}
			fresh, err := Open(context.Background(), lb.Backend, Options{}, nil)
			if err != nil {
				t.Fatal(err)
			}
			if got, want := storeContents(s), storeContents(fresh); tc.badLoads == 0 && !slices.Equal(got, want) {
				t.Errorf("after the failed commit the Store serves\n%v\nthe backend holds\n%v", got, want)
			}
			// The retry of the same batch, then a new change.
			commit(t, s, batch...)
			commit(t, s, contrib("vm2", map[string][]Record{zone: {a("c.example.com.", "10.0.0.3", "vm2")}}))
			if got := all(s, zone); len(got) != 2 || got[1].Name != "c.example.com." {
				t.Errorf("%s after the retry and a new commit: %v", zone, got)
			}
			fresh, err = Open(context.Background(), lb.Backend, Options{}, nil)
			if err != nil {
				t.Fatal(err)
			}
			if got, want := storeContents(s), storeContents(fresh); !slices.Equal(got, want) {
				t.Errorf("the Store serves\n%v\nthe backend holds\n%v", got, want)
			}
		})
	}
}

// storeContents lists every zone with its serial and records.
func storeContents(s *Store) []string {
	var out []string
	for _, z := range s.Zones() {
		snap := s.Snapshot(z)
		out = append(out, fmt.Sprintf("%s %d", z, snap.Serial()))
		for _, r := range all(s, z) {
			out = append(out, "  "+r.Name+" "+r.Data+" "+r.Source)
		}
	}
	return out
}

// TestRedisCommitWithSlowReplies commits over a connection whose reply to
// the commit arrives after the client's read timeout: go-redis resends
// the pipeline (which must not conflict with its own first run), the
// server runs it, and the commit fails. The Store must then serve what
// Redis holds, and later commits must succeed.
func TestRedisCommitWithSlowReplies(t *testing.T) {
	ctx := context.Background()
	srv := redistest.Start(t)
	proxy := startSlowProxy(t, strings.TrimPrefix(srv.URL(), "redis://"))
	r := openRedisAt(t, "redis://"+proxy.addr+"?read_timeout=100ms&max_retries=2")
	s, err := Open(ctx, r, Options{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	var batch []zonegen.Contribution
	for i := range 2000 {
		vm := fmt.Sprintf("vm%05d", i)
		batch = append(batch, contrib(vm, map[string][]Record{zone: {a(vm+".example.com.", fmt.Sprintf("10.0.%d.%d", i>>8, i&255), vm)}}))
	}
	proxy.delay.Store(int64(300 * time.Millisecond))
	if _, err := s.Commit(ctx, batch); err == nil {
		t.Fatal("the commit succeeded though its reply came after the timeout")
	}
	// Redis ran the commit; the Store has taken the zones from it.
	if n := s.Snapshot(zone).Len(); n != 2000 {
		t.Errorf("after the timed-out commit the Store serves %d records; Redis holds 2000", n)
	}
	proxy.delay.Store(0)
	if _, err := s.Commit(ctx, batch); err != nil {
		t.Fatalf("the batch again, with replies on time: %v", err)
	}
	if _, err := s.Commit(ctx, []zonegen.Contribution{contrib("vm00000", nil)}); err != nil {
		t.Fatalf("a later commit: %v", err)
	}
	if n := s.Snapshot(zone).Len(); n != 1999 {
		t.Errorf("the Store serves %d records, want 1999", n)
	}
	fresh, err := Open(ctx, openRedisAt(t, srv.URL()), Options{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := storeContents(s), storeContents(fresh); !slices.Equal(got, want) {
		t.Errorf("the Store (%d lines) and Redis (%d lines) differ", len(got), len(want))
	}
}

// slowProxy forwards TCP to a server. While delay (nanoseconds) is set,
// it holds the server's reply to a request of more than 64 KiB (a commit's
// scripts, not the small commands before it) for delay before passing it
// on, so that the server has written and the client has given up.
type slowProxy struct {
	addr  string
	delay atomic.Int64
}

func startSlowProxy(t *testing.T, target string) *slowProxy {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	p := &slowProxy{addr: ln.Addr().String()}
	go func() {
		for {
			client, err := ln.Accept()
			if err != nil {
				return
			}
			server, err := net.Dial("tcp", target)
			if err != nil {
				client.Close()
				continue
			}
			t.Cleanup(func() { client.Close(); server.Close() })
			var sent atomic.Int64 // request bytes since the last reply
			go func() {
				buf := make([]byte, 64<<10)
				for {
					n, err := client.Read(buf)
					sent.Add(int64(n))
					if n > 0 {
						if _, werr := server.Write(buf[:n]); werr != nil {
							return
						}
					}
					if err != nil {
						server.Close()
						return
					}
				}
			}()
			go func() {
				buf := make([]byte, 64<<10)
				for {
					n, err := server.Read(buf)
					if n > 0 {
						if sent.Swap(0) > 64<<10 {
							time.Sleep(time.Duration(p.delay.Load()))
						}
						if _, werr := client.Write(buf[:n]); werr != nil {
							return
						}
					}
					if err != nil {
						client.Close()
						return
					}
				}
			}()
		}
	}()
	return p
}
