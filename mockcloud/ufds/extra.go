package ufds

import (
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"regexp"
	"slices"
	"strings"

	"github.com/cnsd/cnsd/mockcloud"
)

// An account from a real cloud's dump carries many attributes beyond the
// ones cnsd reads (cn, sn, pwdchangedtime, created_at, …: sdc-ufds
// schema/sdcperson.js). They are stored too, so that a client reads the
// entry whole: the entry is also an extensibleObject, and each attribute
// slapd does not define yet is defined at start (extraSchema): those of
// UFDS's sdcPerson and those the accounts carry. An account added later
// may use only attributes defined by then.

// sdcPersonAttrs are the optional attributes of UFDS's sdcPerson, in the
// names slapd stores them under (LDAPName).
var sdcPersonAttrs = []string{"cn", "sn", "givenname", "company", "address", "city", "state",
	"postalcode", "country", "phone", "pwdchangedtime", "pwdaccountlockedtime", "pwdfailuretime",
	"pwdhistory", "pwdpolicysubentry", "pwdendtime", "imported", "replicated", "createdat",
	"updatedat", "tenant", "disabled"}

// coreSchema is where slapd's own attribute types are listed; the ones
// built into slapd (cn, userPassword) are there too, commented out.
const coreSchema = "/etc/ldap/schema/core.schema"

var attrTypeName = regexp.MustCompile(`attributetype\s*\(\s*\S+\s+NAME\s+(\([^)]*\)|'[^']*')`)
var quoted = regexp.MustCompile(`'([^']*)'`)

// definedAttrs are the attribute names (lower case) slapd knows before
// extraSchema: core.schema's and schemaText's.
func definedAttrs() map[string]bool {
	core, _ := os.ReadFile(coreSchema) // missing: slapd would not start either
	out := map[string]bool{}
	for _, text := range []string{string(core), schemaText} {
		for _, m := range attrTypeName.FindAllStringSubmatch(text, -1) {
			for _, q := range quoted.FindAllStringSubmatch(m[1], -1) {
				out[strings.ToLower(q[1])] = true
			}
		}
	}
	return out
}

// ldapDescr matches what RFC 4512 allows as an attribute name.
var ldapDescr = regexp.MustCompile(`^[a-zA-Z][a-zA-Z0-9-]*$`)

// notAttrs are keys a JSON dump of an LDAP entry carries that are not its
// attributes (ldapjs adds dn and controls) or that the entry has already.
var notAttrs = map[string]bool{"dn": true, "controls": true, "objectclass": true}

// storable reports whether the extra key k can be stored as an attribute.
func storable(k string) bool {
	return ldapDescr.MatchString(LDAPName(k)) && !notAttrs[strings.ToLower(k)]
}

// extraSchema defines the extra attributes of users that slapd lacks.
func extraSchema(users []mockcloud.User) string {
	defined := definedAttrs()
	names := map[string]bool{}
	for _, n := range sdcPersonAttrs {
		names[n] = !defined[n]
	}
	for _, u := range users {
		for k := range u.Extra {
			if n := strings.ToLower(LDAPName(k)); storable(k) && !defined[n] {
				names[n] = true
			}
		}
	}
	var b strings.Builder
	maps.DeleteFunc(names, func(_ string, add bool) bool { return !add })
	for i, n := range slices.Sorted(maps.Keys(names)) {
		fmt.Fprintf(&b, "attributetype ( 1.3.6.1.4.1.32473.1.3.%d NAME '%s'\n"+
			"\tEQUALITY caseIgnoreMatch SYNTAX 1.3.6.1.4.1.1466.115.121.1.15 )\n", i+1, n)
	}
	return b.String()
}

// extraAttrs are a user's extra attributes as (UFDS name, value) pairs,
// sorted: a list gives one pair per element; a value that is not a string
// is stored as its JSON text; null, empty strings, names LDAP cannot
// spell and notAttrs are left out.
func extraAttrs(u mockcloud.User) [][2]string {
	var out [][2]string
	for _, k := range slices.Sorted(maps.Keys(u.Extra)) {
		if !storable(k) {
			continue
		}
		var list []json.RawMessage
		if json.Unmarshal(u.Extra[k], &list) != nil {
			list = []json.RawMessage{u.Extra[k]}
		}
		for _, raw := range list {
			if v := attrText(raw); v != "" {
				out = append(out, [2]string{k, v})
			}
		}
	}
	return out
}

// attrText is the LDAP value of a JSON value: a string as it is, null as
// nothing, anything else its JSON text.
func attrText(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	if string(raw) == "null" {
		return ""
	}
	return string(raw)
}
