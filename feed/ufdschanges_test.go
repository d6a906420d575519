package feed

import (
	"encoding/json"
	"slices"
	"testing"

	"github.com/go-ldap/ldap/v3"
)

func TestParseChanges(t *testing.T) {
	tests := []struct {
		name    string
		in      string
		want    []string
		wantErr bool
	}{
		{name: "modify", in: `[{"operation":"replace","modification":{"type":"triton_cns_enabled","vals":["true"]}},` +
			`{"operation":"delete","modification":{"type":"email","vals":[]}}]`,
			want: []string{"triton_cns_enabled", "email"}},
		{name: "add", in: `{"uuid":["u"],"login":["l"],"objectclass":["sdcperson"]}`,
			want: []string{"login", "objectclass", "uuid"}},
		{name: "empty list", in: ` [] `, want: []string{}},
		{name: "empty object", in: `{}`, want: []string{}},
		{name: "empty", in: "  ", wantErr: true},
		{name: "not json", in: `{not json`, wantErr: true},
		{name: "string", in: `"login"`, wantErr: true},
		{name: "null", in: `null`, wantErr: true},
		{name: "list of strings", in: `["login"]`, wantErr: true},
		{name: "no modification", in: `[{"operation":"replace"}]`, wantErr: true},
		{name: "modification type not a string", in: `[{"operation":"replace","modification":{"type":7}}]`, wantErr: true},
		{name: "modification type empty", in: `[{"modification":{"type":""}}]`, wantErr: true},
		{name: "trailing garbage", in: `[] x`, wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := parseChanges(tt.in)
			if (err != nil) != tt.wantErr {
				t.Fatalf("parseChanges(%q) error %v, want error %v", tt.in, err, tt.wantErr)
			}
			slices.Sort(got)
			want := slices.Sorted(slices.Values(tt.want))
			if !tt.wantErr && !slices.Equal(got, want) {
				t.Errorf("parseChanges(%q) = %q, want %q", tt.in, got, want)
			}
		})
	}
}

// FuzzParseChanges checks that any "changes" value is either refused or
// read as attribute names that survive being written back in the add
// shape, and that nothing panics.
func FuzzParseChanges(f *testing.F) {
	for _, s := range []string{
		`[{"operation":"replace","modification":{"type":"login","vals":["x"]}}]`,
		`{"uuid":["u"],"triton_cns_enabled":["true"]}`,
		`[]`, `{}`, `[{"modification":{}}]`, `{"a":1,"a":2}`, `[null]`, "\ufeff[]", `[{"modification":null}]`,
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		names, err := parseChanges(s)
		if err != nil {
			return
		}
		obj := make(map[string][]string, len(names))
		for _, n := range names {
			obj[n] = nil
		}
		b, err := json.Marshal(obj)
		if err != nil {
			t.Fatalf("names %q do not marshal: %v", names, err)
		}
		again, err := parseChanges(string(b))
		if err != nil {
			t.Fatalf("parseChanges(%s) of names read from %q: %v", b, s, err)
		}
		want := slices.Compact(slices.Sorted(slices.Values(names)))
		if slices.Sort(again); !slices.Equal(again, want) {
			t.Fatalf("round trip of %q: %q, want %q", s, again, want)
		}
	})
}

func TestAccountOfDN(t *testing.T) {
	tests := []struct {
		dn, want string
		wantErr  bool
	}{
		{dn: "uuid=abc, ou=users, o=smartdc", want: "abc"},
		{dn: "UUID=abc,OU=Users,O=SmartDC", want: "abc"},
		{dn: "uuid=sub, uuid=abc, ou=users, o=smartdc"},
		{dn: "login=abc, ou=users, o=smartdc"},
		{dn: "uuid=abc, ou=groups, o=smartdc"},
		{dn: "uuid=abc+login=x, ou=users, o=smartdc"},
		{dn: "ou=users, o=smartdc"},
		{dn: "==,,", wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.dn, func(t *testing.T) {
			got, err := accountOfDN(tt.dn)
			if got != tt.want || (err != nil) != tt.wantErr {
				t.Errorf("accountOfDN(%q) = %q, %v; want %q, error %v", tt.dn, got, err, tt.want, tt.wantErr)
			}
		})
	}
}

func TestParseLogChange(t *testing.T) {
	entry := func(attrs map[string][]string) *ldap.Entry {
		return ldap.NewEntry("changenumber=9, cn=changelog", attrs)
	}
	user := []string{"uuid=abc, ou=users, o=smartdc"}
	mod := func(attr string) []string {
		return []string{`[{"operation":"replace","modification":{"type":"` + attr + `","vals":["v"]}}]`}
	}
	tests := []struct {
		name    string
		attrs   map[string][]string
		want    logChange
		wantErr bool
	}{
		{"flag", map[string][]string{"changenumber": {"9"}, "targetdn": user, "changetype": {"modify"},
			"changes": mod("triton_cns_enabled")}, logChange{9, "abc", true}, false},
		{"folded flag", map[string][]string{"changenumber": {"9"}, "targetdn": user, "changetype": {"modify"},
			"changes": mod("ApprovedForProvisioning")}, logChange{9, "abc", true}, false},
		{"email", map[string][]string{"changenumber": {"9"}, "targetdn": user, "changetype": {"modify"},
			"changes": mod("email")}, logChange{9, "abc", false}, false},
		{"delete without changes", map[string][]string{"changenumber": {"9"}, "targetdn": user,
			"changetype": {"delete"}}, logChange{9, "abc", true}, false},
		{"not an account", map[string][]string{"changenumber": {"9"}, "targetdn": {"cn=x, o=smartdc"},
			"changetype": {"modify"}, "changes": {"junk"}}, logChange{number: 9}, false},
		{"bad number", map[string][]string{"changenumber": {"nine"}}, logChange{}, true},
		{"bad changes keeps number", map[string][]string{"changenumber": {"9"}, "targetdn": user,
			"changetype": {"modify"}, "changes": {"junk"}}, logChange{number: 9}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := parseLogChange(entry(tt.attrs))
			if got != tt.want || (err != nil) != tt.wantErr {
				t.Errorf("parseLogChange = %+v, %v; want %+v, error %v", got, err, tt.want, tt.wantErr)
			}
		})
	}
}
