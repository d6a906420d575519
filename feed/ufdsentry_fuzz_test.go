package feed

import (
	"strings"
	"testing"

	"github.com/go-ldap/ldap/v3"
)

// FuzzLDAPEntries feeds arbitrary DNs and attribute values, as UFDS could
// send them, to the account and changelog readers: they never panic, an
// account they accept has a uuid and a login, and a change they tie to an
// account names one.
func FuzzLDAPEntries(f *testing.F) {
	f.Add("uuid=a11ce000-0000-4000-8000-000000000001, ou=users, o=smartdc", "a11ce000-0000-4000-8000-000000000001", "alice",
		"true", "42", "modify", `[{"operation":"replace","modification":{"type":"login","vals":["bob"]}}]`)
	f.Add("changenumber=7, cn=changelog", "", "", "false", "x", "delete", "")
	f.Add("uuid=u, ou=users, o=smartdc", "u\x00", "l\nm", "", "-1", "add", `{"uuid":["u"]}`)
	f.Fuzz(func(t *testing.T, dn, uuid, login, enabled, number, kind, changes string) {
		attrs := map[string][]string{"uuid": {uuid}, "login": {login}, "triton_cns_enabled": {enabled},
			"approved_for_provisioning": strings.Split(enabled, ","),
			"changenumber":              {number}, "targetdn": {dn}, "changetype": {kind}, "changes": {changes}}
		if a, err := parseAccount(ldap.NewEntry(dn, attrs)); err == nil && (a.UUID == "" || a.Login == "") {
			t.Fatalf("account accepted without uuid or login: %+v", a)
		}
		c, err := parseLogChange(ldap.NewEntry(dn, attrs))
		if err == nil && c.uuid != "" {
			if got, derr := accountOfDN(dn); derr != nil || got != c.uuid {
				t.Fatalf("change tied to %q, but the DN %q gives %q (%v)", c.uuid, dn, got, derr)
			}
		}
	})
}
