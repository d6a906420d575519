// Package ufds is the UFDS (LDAP) half of the simulated cloud: it runs a
// real OpenLDAP slapd on 127.0.0.1 in a directory it is given, with a small
// UFDS-like schema, loads a mockcloud.Cloud's accounts under
// "ou=users, o=smartdc" and mirrors its numbered account changelog into
// "cn=changelog" and "cn=latestchangenumber", the way UFDS serves them.
//
// UFDS keeps its own changelog (it is not slapd's accesslog), so the harness
// writes each change twice, as UFDS does: the modify of the user entry and a
// changeLogEntry whose "changes" attribute is the JSON UFDS stores.
//
// One deviation from UFDS is forced by OpenLDAP: RFC 4512 attribute names
// may not contain '_', so slapd stores triton_cns_enabled and
// approved_for_provisioning as tritoncnsenabled and approvedforprovisioning
// (LDAPName). UFDS, built on ldapjs, is lax and uses the underscored names;
// a client that folds case and underscores reads both. The JSON in
// "changes" is a string and carries UFDS's own names.
//
// A missing slapd is an error naming the Debian packages slapd and
// ldap-utils. Tests use it through mockcloud/ufdstest; cmd/mockcloud -ufds
// serves it next to the HTTP APIs.
//
// Example:
//
//	c := mockcloud.New(mockcloud.Generate(mockcloud.GenOptions{VMs: 4, Accounts: 4, Servers: 1, Seed: 1}), nil)
//	s, err := ufds.Start(c, ufds.Options{Dir: dir}) // s.URL is ldap://127.0.0.1:port
//	c.UpdateUser(uuid, mockcloud.UserPatch{TritonCNSEnabled: &off})
//	err = s.Sync(c) // the modify, its changelog entry, the new count
//	s.Stop()        // an outage; s.Restart() ends it, on the same URL
//
// ufds may import the standard library and mockcloud only; it drives
// slapd through its own programs (slapadd, ldapmodify), so mockcloud keeps
// no LDAP library among its dependencies.
package ufds
