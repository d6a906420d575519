package feed

import (
	"context"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cnsd/cnsd/logtest"
	"github.com/cnsd/cnsd/mockcloud"
	"github.com/cnsd/cnsd/mockcloud/ufdstest"
	"github.com/cnsd/cnsd/schema"
)

// ufdsFixture is a mock cloud, its slapd and a client of it.
type ufdsFixture struct {
	cloud *mockcloud.Cloud
	ldap  *ufdstest.Server
	u     *UFDS
	log   *logtest.Buffer
	clock *clock
}

func newUFDSFixture(t *testing.T) *ufdsFixture {
	t.Helper()
	c := mockcloud.New(mockcloud.Generate(mockcloud.GenOptions{VMs: 4, Accounts: 4, Servers: 1, Seed: 7}), nil)
	s := ufdstest.Start(t, c)
	f := &ufdsFixture{cloud: c, ldap: s, log: &logtest.Buffer{}, clock: &clock{t: time.Unix(1e9, 0)}}
	cfg := schema.UFDSConfig{Endpoint: schema.Endpoint{URL: s.URL}, BindDN: ufdstest.RootDN,
		BindPassword: ufdstest.Password, CacheTime: time.Hour}
	f.u = NewUFDS(cfg, slog.New(slog.NewTextHandler(f.log, &slog.HandlerOptions{Level: slog.LevelDebug})))
	f.u.now = f.clock.Now
	f.u.pollEvery, f.u.retryMin, f.u.retryMax = 5*time.Millisecond, time.Millisecond, 10*time.Millisecond
	t.Cleanup(func() { f.u.Close() })
	return f
}

// watch runs Watch until the test ends and returns the uuids it reports.
// It returns once the watcher has read its starting point, so changes
// made afterwards are reported.
func (f *ufdsFixture) watch(t *testing.T) <-chan string {
	t.Helper()
	changed := make(chan string, 100)
	started := make(chan struct{})
	var once sync.Once
	f.u.onPoll = func(int64) { once.Do(func() { close(started) }) }
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- f.u.Watch(ctx, func(id string) { changed <- id }) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("Watch: %v", err)
		}
	})
	select {
	case <-started:
	case err := <-done:
		t.Fatalf("Watch returned before its first poll: %v", err)
	}
	return changed
}

// next waits for the next reported uuid; the test's own deadline bounds it.
func next(t *testing.T, changed <-chan string) string {
	t.Helper()
	return <-changed
}

// user returns a generated account that has a login.
func (f *ufdsFixture) user(t *testing.T, i int) mockcloud.User {
	t.Helper()
	us := f.cloud.Users()
	if len(us) <= i {
		t.Fatalf("fixture has %d accounts", len(us))
	}
	return us[i]
}

func hasLine(log, a, b string) bool {
	for _, l := range strings.Split(log, "\n") {
		if strings.Contains(l, a) && strings.Contains(l, b) {
			return true
		}
	}
	return false
}

// current is the cloud's account uuid now.
func (f *ufdsFixture) current(t *testing.T, uuid string) mockcloud.User {
	t.Helper()
	for _, u := range f.cloud.Users() {
		if u.UUID == uuid {
			return u
		}
	}
	t.Fatalf("no account %s", uuid)
	return mockcloud.User{}
}
