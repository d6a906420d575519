package ufds

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/cnsd/cnsd/mockcloud"
)

// TestExtraAttributesStored: an account dumped from a real UFDS keeps its
// other attributes (a list is several values, a number its text), and an
// account added later with them is mirrored with them.
func TestExtraAttributesStored(t *testing.T) {
	raw := `{"users": [{"uuid": "0b8a3e0c-0000-4000-8000-000000000001", "login": "alice",
	  "triton_cns_enabled": "true", "cn": ["Alice", "Alice Liddell"], "sn": "Liddell",
	  "pwdchangedtime": "1735689600000", "created_at": 1704067200000, "_imported": "true",
	  "objectclass": "sdcperson", "dn": "uuid=0b8a3e0c-0000-4000-8000-000000000001, ou=users, o=smartdc",
	  "controls": [], "odd key!": "x", "nothing": null}]}`
	f, err := mockcloud.DecodeFixture(strings.NewReader(raw))
	if err != nil {
		t.Fatal(err)
	}
	c := mockcloud.New(f, nil)
	s, err := Start(c, Options{Dir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Stop)
	got := search(t, s, UsersDN, "(login=alice)")
	for _, want := range []string{"cn: Alice\n", "cn: Alice Liddell\n", "sn: Liddell\n", "pwdchangedtime: 1735689600000\n",
		"createdat: 1704067200000\n", "imported: true\n", "tritoncnsenabled: true\n"} {
		if !strings.Contains(got, want) {
			t.Errorf("entry lacks %q:\n%s", want, got)
		}
	}
	if strings.Contains(got, "controls") || strings.Contains(got, "nothing") || strings.Count(got, "dn: ") != 1 {
		t.Errorf("entry holds what is not an attribute:\n%s", got)
	}
	var u mockcloud.User
	json.Unmarshal([]byte(`{"uuid": "0b8a3e0c-0000-4000-8000-000000000002", "login": "bob", "sn": "Builder", "updated_at": "1"}`), &u)
	if _, err := c.AddUser(u); err != nil {
		t.Fatal(err)
	}
	if err := s.Sync(c); err != nil {
		t.Fatal(err)
	}
	if got := search(t, s, UsersDN, "(login=bob)"); !strings.Contains(got, "sn: Builder") || !strings.Contains(got, "updatedat: 1") {
		t.Errorf("added account:\n%s", got)
	}
	if got := search(t, s, ChangelogDN, "(changenumber=1)"); !strings.Contains(got, "changes") {
		t.Errorf("changelog of the add:\n%s", got)
	}
}
