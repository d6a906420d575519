package feed

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"
)

func TestUFDSMalformedAccount(t *testing.T) {
	f := newUFDSFixture(t)
	const id = "0b8a3e0c-0000-4000-8000-00000000000b"
	dn := "uuid=" + id + ", ou=users, o=smartdc"
	err := f.ldap.Modify("dn: " + dn + "\nchangetype: add\nobjectclass: sdcPerson\nuuid: " + id +
		"\nlogin: one\nlogin: two\ntritoncnsenabled: true\n")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.u.User(context.Background(), id); !errors.Is(err, ErrUnresolved) {
		t.Errorf("User of an account with two logins: err %v, want ErrUnresolved", err)
	}
	if !hasLine(f.log.String(), "malformed ufds entry skipped", id) {
		t.Errorf("no log line names the entry:\n%s", f.log.String())
	}
	// Every retry of the owner's VMs looks the entry up again: the
	// warning is logged once a minute, the next one counting the rest.
	for range 3 {
		f.u.User(context.Background(), id)
	}
	if n := strings.Count(f.log.String(), "malformed ufds entry skipped"); n != 1 {
		t.Errorf("%d warnings for 4 lookups within a minute, want 1:\n%s", n, f.log.String())
	}
	start := time.Now()
	f.u.now = func() time.Time { return start.Add(2 * time.Minute) }
	f.u.User(context.Background(), id)
	if !hasLine(f.log.String(), "malformed ufds entry skipped", "repeats_not_logged=3") {
		t.Errorf("the warning after a minute does not count the 3 left out:\n%s", f.log.String())
	}
	// The lookup failing is no reason to stop serving other accounts.
	if _, err := f.u.User(context.Background(), f.user(t, 0).UUID); err != nil {
		t.Errorf("User of a good account after a bad one: %v", err)
	}
}

func TestUFDSMalformedChangelog(t *testing.T) {
	f := newUFDSFixture(t)
	target := f.user(t, 2)
	changed := f.watch(t)
	n := f.ldap.Applied()
	userDN := "uuid=" + target.UUID + ", ou=users, o=smartdc"
	entries := []struct{ name, attrs string }{
		{"changes not json", "targetdn: " + userDN + "\nchangetype: modify\nchanges: {not json\n"},
		{"targetdn not a dn", "targetdn: ==,,\nchangetype: modify\nchanges: []\n"},
		{"no changes", "targetdn: " + userDN + "\nchangetype: modify\n"},
		{"two targets", "targetdn: " + userDN + "\ntargetdn: o=smartdc\nchangetype: modify\nchanges: []\n"},
		{"modification without type", "targetdn: " + userDN + "\nchangetype: modify\nchanges: [{\"operation\":\"replace\"}]\n"},
		{"good", "targetdn: " + userDN + "\nchangetype: modify\n" +
			`changes: [{"operation":"replace","modification":{"type":"login","vals":["x"]}}]` + "\n"},
	}
	var ldif string
	for i, e := range entries {
		num := n + int64(i) + 1
		ldif += fmt.Sprintf("dn: changenumber=%d, cn=changelog\nchangetype: add\nobjectclass: changeLogEntry\n"+
			"changenumber: %d\n%s\n", num, num, e.attrs)
	}
	ldif += fmt.Sprintf("dn: cn=latestchangenumber\nchangetype: modify\nreplace: count\ncount: %d\n-\n", n+int64(len(entries)))
	if err := f.ldap.Modify(ldif); err != nil {
		t.Fatal(err)
	}
	if got := next(t, changed); got != target.UUID {
		t.Errorf("onChange(%s), want %s", got, target.UUID)
	}
	log := f.log.String()
	for i, e := range entries[:len(entries)-1] {
		if dn := fmt.Sprintf("changenumber=%d,cn=changelog", n+int64(i)+1); !hasLine(log, "malformed ufds changelog entry skipped", dn) {
			t.Errorf("%s: no log line names %s", e.name, dn)
		}
	}
	if t.Failed() {
		t.Logf("log:\n%s", log)
	}
}
