package feed

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/cnsd/cnsd/mockcloud"
	"github.com/cnsd/cnsd/zonegen"
)

func account(u mockcloud.User) zonegen.Account {
	return zonegen.Account{UUID: u.UUID, Login: u.Login,
		TritonCNSEnabled:        zonegen.FlagString(u.TritonCNSEnabled),
		ApprovedForProvisioning: zonegen.FlagString(u.ApprovedForProvisioning)}
}

func TestUFDSUser(t *testing.T) {
	f := newUFDSFixture(t)
	bare := mockcloud.User{UUID: "0b8a3e0c-0000-4000-8000-000000000001", Login: "bare"}
	if _, err := f.cloud.AddUser(bare); err != nil {
		t.Fatal(err)
	}
	if err := f.ldap.Sync(f.cloud); err != nil {
		t.Fatal(err)
	}
	u0 := f.user(t, 0)
	tests := []struct {
		name    string
		uuid    string
		want    zonegen.Account
		wantErr error
	}{
		{name: "generated account", uuid: u0.UUID, want: account(u0)},
		{name: "account without flags", uuid: bare.UUID, want: zonegen.Account{UUID: bare.UUID, Login: "bare"}},
		{name: "unknown uuid", uuid: "0b8a3e0c-0000-4000-8000-0000000000ff", wantErr: ErrNoAccount},
		{name: "filter metacharacters", uuid: "*)(uuid=*", wantErr: ErrNoAccount},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := f.u.User(context.Background(), tt.uuid)
			if !errors.Is(err, tt.wantErr) || got != tt.want {
				t.Errorf("User(%s) = %+v, %v; want %+v, %v", tt.uuid, got, err, tt.want, tt.wantErr)
			}
		})
	}
}

func TestUFDSCache(t *testing.T) {
	f := newUFDSFixture(t)
	u := f.user(t, 1)
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			if got, err := f.u.User(context.Background(), u.UUID); err != nil || got != account(u) {
				t.Errorf("User = %+v, %v", got, err)
			}
		})
	}
	wg.Wait()
	// Whether the eight lookups overlapped or not, they shared a search
	// or found its answer cached.
	if n := f.u.searches.Load(); n != 1 {
		t.Errorf("%d searches for one account, want 1", n)
	}
	f.ldap.Stop()
	if got, err := f.u.User(context.Background(), u.UUID); err != nil || got != account(u) {
		t.Errorf("cached User with slapd stopped = %+v, %v", got, err)
	}
	if n := f.u.searches.Load(); n != 1 {
		t.Errorf("%d searches, want the cached answer", n)
	}
}

func TestUFDSOutage(t *testing.T) {
	f := newUFDSFixture(t)
	known, other := f.user(t, 0), f.user(t, 1)
	if _, err := f.u.User(context.Background(), known.UUID); err != nil {
		t.Fatal(err)
	}
	f.ldap.Stop()
	f.clock.Add(2 * time.Hour) // the cached account is stale now
	got, err := f.u.User(context.Background(), known.UUID)
	if err != nil || got != account(known) {
		t.Errorf("stale cached User during outage = %+v, %v; want the cached account", got, err)
	}
	if _, err := f.u.User(context.Background(), other.UUID); !errors.Is(err, ErrUnresolved) {
		t.Errorf("uncached User during outage: err %v, want ErrUnresolved", err)
	}
	f.ldap.Restart()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	for {
		f.clock.Add(time.Minute) // past any back-off
		got, err := f.u.User(ctx, other.UUID)
		if err == nil {
			if got != account(other) {
				t.Errorf("User after recovery = %+v", got)
			}
			break
		}
		if ctx.Err() != nil {
			t.Fatalf("no recovery after restart: %v", err)
		}
	}
	if !hasLine(f.log.String(), "ufds reconnected", f.ldap.URL) {
		t.Errorf("no reconnect logged:\n%s", f.log.String())
	}
}

func TestUFDSWatch(t *testing.T) {
	f := newUFDSFixture(t)
	a, b := f.user(t, 0), f.user(t, 1)
	if _, err := f.u.User(context.Background(), a.UUID); err != nil {
		t.Fatal(err)
	}
	changed := f.watch(t)
	steps := []struct {
		name  string
		uuid  string
		patch mockcloud.UserPatch
		want  bool // reported
	}{
		{"cns disabled", a.UUID, mockcloud.UserPatch{TritonCNSEnabled: ptr("false")}, true},
		{"email changed", a.UUID, mockcloud.UserPatch{Email: ptr("new@example.com")}, false},
		{"login renamed", b.UUID, mockcloud.UserPatch{Login: ptr("renamed")}, true},
		{"approval removed", a.UUID, mockcloud.UserPatch{ApprovedForProvisioning: ptr("")}, true},
	}
	for _, st := range steps {
		if _, err := f.cloud.UpdateUser(st.uuid, st.patch); err != nil {
			t.Fatal(err)
		}
		if err := f.ldap.Sync(f.cloud); err != nil {
			t.Fatal(err)
		}
		if !st.want {
			continue // a later reported step shows it was passed over
		}
		if got := next(t, changed); got != st.uuid {
			t.Fatalf("%s: onChange(%s), want %s", st.name, got, st.uuid)
		}
		cur := f.current(t, st.uuid)
		if got, err := f.u.User(context.Background(), st.uuid); err != nil || got != account(cur) {
			t.Errorf("%s: User = %+v, %v; want %+v", st.name, got, err, account(cur))
		}
	}
}

func TestUFDSWatchReconnects(t *testing.T) {
	f := newUFDSFixture(t)
	f.u.now = time.Now // the back-off runs on the watcher's real timers
	a := f.user(t, 3)
	changed := f.watch(t)
	f.ldap.Stop()
	for !hasLine(f.log.String(), "ufds changelog poll failed", "retry_in") {
		time.Sleep(5 * time.Millisecond) // waiting for a condition, not timing it
	}
	f.ldap.Restart()
	if _, err := f.cloud.UpdateUser(a.UUID, mockcloud.UserPatch{TritonCNSEnabled: ptr("false")}); err != nil {
		t.Fatal(err)
	}
	if err := f.ldap.Sync(f.cloud); err != nil {
		t.Fatal(err)
	}
	if got := next(t, changed); got != a.UUID {
		t.Errorf("onChange(%s) after reconnect, want %s", got, a.UUID)
	}
	if got, err := f.u.User(context.Background(), a.UUID); err != nil || got.TritonCNSEnabled != "false" {
		t.Errorf("User after reconnect = %+v, %v", got, err)
	}
}

// TestUFDSChangelogBackwards: a changelog number that goes down (UFDS
// restored from a backup) means any cached account may be wrong.
func TestUFDSChangelogBackwards(t *testing.T) {
	f := newUFDSFixture(t)
	a, b := f.user(t, 0), f.user(t, 1)
	changed := f.watch(t)
	if _, err := f.cloud.UpdateUser(a.UUID, mockcloud.UserPatch{Login: ptr("renamed")}); err != nil {
		t.Fatal(err)
	}
	if err := f.ldap.Sync(f.cloud); err != nil {
		t.Fatal(err)
	}
	if got := next(t, changed); got != a.UUID {
		t.Fatalf("onChange(%s), want %s", got, a.UUID)
	}
	for _, id := range []string{a.UUID, b.UUID} {
		if _, err := f.u.User(context.Background(), id); err != nil {
			t.Fatal(err)
		}
	}
	if err := f.ldap.Modify("dn: cn=latestchangenumber\nchangetype: modify\nreplace: count\ncount: 0\n-\n"); err != nil {
		t.Fatal(err)
	}
	got := map[string]bool{next(t, changed): true, next(t, changed): true}
	if !got[a.UUID] || !got[b.UUID] {
		t.Errorf("onChange after the changelog went back: %v, want %s and %s", got, a.UUID, b.UUID)
	}
	before := f.u.searches.Load()
	if _, err := f.u.User(context.Background(), b.UUID); err != nil {
		t.Fatal(err)
	}
	if f.u.searches.Load() != before+1 {
		t.Errorf("the cached account was served, not read again")
	}
}
