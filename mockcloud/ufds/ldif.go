package ufds

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/cnsd/cnsd/mockcloud"
)

// userDN is where UFDS keeps an account.
func userDN(uuid string) string { return "uuid=" + uuid + ", " + UsersDN }

// changeDN is where UFDS keeps changelog entry n.
func changeDN(n int64) string { return "changenumber=" + strconv.FormatInt(n, 10) + ", " + ChangelogDN }

// line is one LDIF attribute line, base64-encoded when LDIF requires it
// (the JSON of "changes" may start with '[' or hold anything).
func line(attr, val string) string {
	safe := utf8.ValidString(val) && !strings.ContainsAny(val, "\n\r\x00") &&
		(val == "" || !strings.ContainsAny(val[:1], " :<")) && !strings.HasSuffix(val, " ")
	if safe {
		return attr + ": " + val + "\n"
	}
	return attr + ":: " + base64.StdEncoding.EncodeToString([]byte(val)) + "\n"
}

// userAttrs are an account's attributes as slapd stores them, in UFDS's
// names, its extra ones last (extra.go); empty ones are absent.
func userAttrs(u mockcloud.User) [][2]string {
	var out [][2]string
	for _, a := range [][2]string{
		{"uuid", u.UUID}, {"login", u.Login}, {"email", u.Email},
		{"triton_cns_enabled", u.TritonCNSEnabled},
		{"approved_for_provisioning", u.ApprovedForProvisioning},
	} {
		if a[1] != "" {
			out = append(out, a)
		}
	}
	return append(out, extraAttrs(u)...)
}

// userEntry is the LDIF of an account for slapadd or an add.
func userEntry(u mockcloud.User) string {
	s := "dn: " + userDN(u.UUID) + "\nobjectclass: sdcPerson\n"
	if len(u.Extra) > 0 {
		s += "objectclass: extensibleObject\n"
	}
	for _, a := range userAttrs(u) {
		s += line(LDAPName(a[0]), a[1])
	}
	return s
}

// changeEntry is the changelog entry UFDS would write for ch. It names
// the object class first so the "changetype" attribute is never read as
// an LDIF directive.
func changeEntry(ch mockcloud.UserChange) string {
	return "dn: " + changeDN(ch.ChangeNumber) + "\nobjectclass: changeLogEntry\n" +
		line("changenumber", strconv.FormatInt(ch.ChangeNumber, 10)) +
		line("targetdn", userDN(ch.User.UUID)) +
		line("changetype", ch.Type) +
		line("changes", changesJSON(ch)) +
		line("changetime", ch.Time.UTC().Format(time.RFC3339Nano))
}

// changesJSON is UFDS's "changes" value: for an add, the new entry as an
// object of value lists; for a modify, the list of LDAP modifications.
func changesJSON(ch mockcloud.UserChange) string {
	type mod struct {
		Type string   `json:"type"`
		Vals []string `json:"vals"`
	}
	type change struct {
		Operation    string `json:"operation"`
		Modification mod    `json:"modification"`
	}
	var v any
	if ch.Type == "add" {
		obj := map[string][]string{"objectclass": {"sdcperson"}}
		for _, a := range userAttrs(ch.User) {
			obj[a[0]] = append(obj[a[0]], a[1])
		}
		v = obj
	} else {
		all := map[string]string{}
		for _, a := range userAttrs(ch.User) {
			all[a[0]] = a[1]
		}
		list := []change{}
		for _, name := range ch.Changed {
			if val, ok := all[name]; ok {
				list = append(list, change{"replace", mod{name, []string{val}}})
			} else {
				list = append(list, change{"delete", mod{name, []string{}}})
			}
		}
		v = list
	}
	b, err := json.Marshal(v)
	if err != nil {
		panic(fmt.Sprintf("ufds: marshal changes: %v", err)) // strings only: cannot fail
	}
	return string(b)
}

// latestEntry is the cn=latestchangenumber entry holding n.
func latestEntry(n int64) string {
	return "dn: " + LatestDN + "\nobjectclass: latestChangeNumber\ncn: latestchangenumber\n" +
		line("count", strconv.FormatInt(n, 10))
}
