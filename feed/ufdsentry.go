package feed

import (
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/go-ldap/ldap/v3"

	"github.com/cnsd/cnsd/zonegen"
)

// foldAttr is the form in which attribute names are compared: LDAP names
// are case-insensitive, and UFDS's triton_cns_enabled is stored as
// tritoncnsenabled by servers that keep to RFC 4512's character set.
func foldAttr(name string) string { return strings.ToLower(strings.ReplaceAll(name, "_", "")) }

// attrs are an entry's values by folded attribute name; two spellings of
// one attribute count as one attribute with all their values.
func attrs(e *ldap.Entry) map[string][]string {
	m := make(map[string][]string, len(e.Attributes))
	for _, a := range e.Attributes {
		k := foldAttr(a.Name)
		m[k] = append(m[k], a.Values...)
	}
	return m
}

// single returns the one value of attribute name; required says whether
// its absence is an error.
func single(m map[string][]string, name string, required bool) (string, error) {
	switch v := m[foldAttr(name)]; len(v) {
	case 0:
		if required {
			return "", fmt.Errorf("no %s", name)
		}
		return "", nil
	case 1:
		return v[0], nil
	default:
		return "", fmt.Errorf("%d values of %s", len(v), name)
	}
}

// parseAccount reads an sdcPerson entry.
func parseAccount(e *ldap.Entry) (zonegen.Account, error) {
	m := attrs(e)
	var a zonegen.Account
	var errs []error
	for _, f := range []struct {
		name     string
		dst      *string
		required bool
	}{
		{"uuid", &a.UUID, true},
		{"login", &a.Login, true},
		{"triton_cns_enabled", (*string)(&a.TritonCNSEnabled), false},
		{"approved_for_provisioning", (*string)(&a.ApprovedForProvisioning), false},
	} {
		v, err := single(m, f.name, f.required)
		*f.dst = v
		errs = append(errs, err)
	}
	if err := errors.Join(errs...); err != nil {
		return zonegen.Account{}, fmt.Errorf("malformed account: %w", err)
	}
	if a.UUID == "" || a.Login == "" {
		return zonegen.Account{}, errors.New("malformed account: empty uuid or login")
	}
	return a, nil
}

// watchedAttrs are the account attributes naming depends on (docs/pipeline.md,
// The decisions, rule 3; login in names: docs/user-guide.md).
var watchedAttrs = map[string]bool{
	foldAttr("triton_cns_enabled"):        true,
	foldAttr("approved_for_provisioning"): true,
	foldAttr("login"):                     true,
}

// logChange is what cnsd needs of one cn=changelog entry.
type logChange struct {
	number int64
	uuid   string // the account changed; "" if the target is not an account
	naming bool   // whether a watched attribute changed
}

// parseLogChange reads a changelog entry. An entry about anything but an
// account is returned with no uuid; its changes are not parsed.
func parseLogChange(e *ldap.Entry) (logChange, error) {
	m := attrs(e)
	num, err := single(m, "changenumber", true)
	if err != nil {
		return logChange{}, err
	}
	var c logChange
	if c.number, err = strconv.ParseInt(num, 10, 64); err != nil {
		return logChange{}, fmt.Errorf("changenumber %q: %w", num, err)
	}
	target, err := single(m, "targetdn", true)
	if err != nil {
		return c, err
	}
	uuid, err := accountOfDN(target)
	if err != nil || uuid == "" {
		return c, err
	}
	kind, err := single(m, "changetype", true)
	if err != nil {
		return c, err
	}
	changes, err := single(m, "changes", kind != "delete")
	if err != nil {
		return c, err
	}
	c.uuid, c.naming = uuid, kind == "delete"
	if changes == "" {
		return c, nil
	}
	names, err := parseChanges(changes)
	if err != nil {
		return logChange{number: c.number}, err
	}
	for _, n := range names {
		c.naming = c.naming || watchedAttrs[foldAttr(n)]
	}
	return c, nil
}

// accountOfDN returns the uuid of an account's DN,
// "uuid=<uuid>, ou=users, o=smartdc", or "" for any other DN (sub-users
// and roles live deeper under an account and are not accounts).
func accountOfDN(dn string) (string, error) {
	d, err := ldap.ParseDN(dn)
	if err != nil {
		return "", fmt.Errorf("targetdn %q: %w", dn, err)
	}
	want := []string{"uuid", "ou=users", "o=smartdc"}
	if len(d.RDNs) != len(want) {
		return "", nil
	}
	for i, r := range d.RDNs {
		if len(r.Attributes) != 1 {
			return "", nil
		}
		a := r.Attributes[0]
		typ, val, _ := strings.Cut(want[i], "=")
		if !strings.EqualFold(a.Type, typ) || (val != "" && !strings.EqualFold(a.Value, val)) {
			return "", nil
		}
	}
	return d.RDNs[0].Attributes[0].Value, nil
}
