package store

import (
	"context"
	"errors"
	"testing"

	"github.com/cnsd/cnsd/zonegen"
)

// TestKeepFollowOverRedis has a second process — its own connection and
// Store — follow a writer that keeps an empty zone, fills it and empties
// it again.
func TestKeepFollowOverRedis(t *testing.T) {
	wr, srv := openTestRedis(t)
	fr := openRedisAt(t, srv.URL())
	w, _ := open(t, wr, Options{})
	f, _ := open(t, fr, Options{})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- f.Follow(ctx, fr) }()
	defer func() {
		cancel()
		<-done
	}()
	if err := w.Keep(ctx, []string{zone}); err != nil {
		t.Fatal(err)
	}
	waitSame(t, w, f)
	rec := a("www."+zone, "192.0.2.1", "vm1")
	commit(t, w, contrib("vm1", map[string][]Record{zone: {rec}}))
	waitSame(t, w, f)
	commit(t, w, zonegen.Contribution{VM: "vm1"})
	waitSame(t, w, f)
	if snap := f.Snapshot(zone); snap == nil || snap.Len() != 0 {
		t.Errorf("follower's emptied kept zone = %v, want published empty", snap)
	}
}

func TestKeep(t *testing.T) {
	t.Run("apply fails", func(t *testing.T) {
		fb := &failing{Backend: NewMemory(), fail: true}
		s, _ := open(t, fb, Options{})
		if err := s.Keep(context.Background(), []string{zone}); !errors.Is(err, errInjected) {
			t.Fatalf("Keep = %v, want the backend's error", err)
		}
		if got := s.Zones(); len(got) != 0 {
			t.Errorf("Zones after a failed Keep = %v, want none", got)
		}
		fb.set(false)
		if err := s.Keep(context.Background(), []string{zone}); err != nil || s.Snapshot(zone) == nil {
			t.Errorf("Keep again = %v, zones %v", err, s.Zones())
		}
	})
	t.Run("returns after its final serial", func(t *testing.T) {
		s, _ := open(t, NewMemory(), Options{})
		commit(t, s, contrib("vm1", map[string][]Record{zone: {a("www."+zone, "192.0.2.1", "vm1")}}))
		commit(t, s, zonegen.Contribution{VM: "vm1"})
		final := s.dropped[zone]
		if final == 0 || s.Snapshot(zone) != nil {
			t.Fatalf("zone not dropped: %v", s.Zones())
		}
		if err := s.Keep(context.Background(), []string{zone}); err != nil {
			t.Fatal(err)
		}
		if snap := s.Snapshot(zone); snap == nil || !final.Less(snap.Serial()) {
			t.Errorf("kept zone back at %v, want after %d", snap, final)
		}
	})
	t.Run("following", func(t *testing.T) {
		s, _ := open(t, NewMemory(), Options{})
		s.following = true // as Follow leaves it
		if err := s.Keep(context.Background(), []string{zone}); !errors.Is(err, ErrFollowing) || len(s.Zones()) != 0 {
			t.Errorf("Keep on a follower = %v, zones %v; want ErrFollowing, none", err, s.Zones())
		}
	})
}
