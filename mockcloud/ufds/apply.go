package ufds

import (
	"fmt"
	"strings"

	"github.com/cnsd/cnsd/mockcloud"
)

// Apply writes one account change to slapd as UFDS would: the add or
// modify of the account, its changelog entry and the new
// cn=latestchangenumber, in that order, so a reader that sees the new
// number finds the entry.
func (s *Server) Apply(ch mockcloud.UserChange) error {
	var b strings.Builder
	if ch.Type == "add" {
		e := userEntry(ch.User)
		dn, rest, _ := strings.Cut(e, "\n")
		b.WriteString(dn + "\nchangetype: add\n" + rest + "\n")
	} else {
		b.WriteString(userModify(ch))
	}
	dn, rest, _ := strings.Cut(changeEntry(ch), "\n")
	b.WriteString(dn + "\nchangetype: add\n" + rest + "\n")
	b.WriteString("dn: " + LatestDN + "\nchangetype: modify\nreplace: count\n" +
		line("count", fmt.Sprint(ch.ChangeNumber)) + "-\n")
	if err := s.Modify(b.String()); err != nil {
		return fmt.Errorf("apply change %d: %w", ch.ChangeNumber, err)
	}
	s.mu.Lock()
	s.applied = max(s.applied, ch.ChangeNumber)
	s.mu.Unlock()
	return nil
}

// userModify replaces each changed attribute; a replace without values
// removes one that the change emptied, whether it was there or not.
func userModify(ch mockcloud.UserChange) string {
	vals := map[string]string{}
	for _, a := range userAttrs(ch.User) {
		vals[a[0]] = a[1]
	}
	s := "dn: " + userDN(ch.User.UUID) + "\nchangetype: modify\n"
	for _, name := range ch.Changed {
		s += "replace: " + LDAPName(name) + "\n"
		if v, ok := vals[name]; ok {
			s += line(LDAPName(name), v)
		}
		s += "-\n"
	}
	return s + "\n"
}

// Sync mirrors every change of c's changelog not yet applied.
func (s *Server) Sync(c *mockcloud.Cloud) error {
	s.mu.Lock()
	after := s.applied
	s.mu.Unlock()
	for _, ch := range c.UserChanges(after) {
		if err := s.Apply(ch); err != nil {
			return err
		}
	}
	return nil
}

// Modify runs LDIF change records (ldapmodify syntax) as the root, for
// tests that write what no cloud change would, such as malformed entries.
func (s *Server) Modify(ldif string) error {
	return s.run("ldapmodify", ldif, "-x", "-H", s.URL, "-D", RootDN, "-w", Password)
}

// Applied is the last change number written to the changelog.
func (s *Server) Applied() int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.applied
}
