package ufds

import (
	"os/exec"
	"strconv"
	"strings"
	"testing"

	"github.com/cnsd/cnsd/mockcloud"
)

func search(t *testing.T, s *Server, base, filter string) string {
	t.Helper()
	out, err := exec.Command("ldapsearch", "-x", "-LLL", "-H", s.URL, "-b", base, filter).CombinedOutput()
	if err != nil {
		t.Fatalf("ldapsearch %s %s: %v: %s", base, filter, err, out)
	}
	return string(out)
}

func TestStartLoadsAndMirrors(t *testing.T) {
	c := mockcloud.New(mockcloud.Generate(mockcloud.GenOptions{VMs: 2, Accounts: 3, Servers: 1, Seed: 1}), nil)
	s, err := Start(c, Options{Dir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Stop)
	u := c.Users()[0]
	if got := search(t, s, UsersDN, "(uuid="+u.UUID+")"); !strings.Contains(got, "login: "+u.Login) {
		t.Fatalf("user %s not loaded:\n%s", u.UUID, got)
	}
	off := "false"
	if _, err := c.UpdateUser(u.UUID, mockcloud.UserPatch{TritonCNSEnabled: &off}); err != nil {
		t.Fatal(err)
	}
	if err := s.Sync(c); err != nil {
		t.Fatal(err)
	}
	if got := search(t, s, UsersDN, "(uuid="+u.UUID+")"); !strings.Contains(got, "tritoncnsenabled: false") {
		t.Errorf("flag not changed:\n%s", got)
	}
	n := s.Applied()
	got := search(t, s, ChangelogDN, "(changenumber>="+itoa(n)+")")
	if !strings.Contains(got, "triton_cns_enabled") || !strings.Contains(got, "uuid="+u.UUID) {
		t.Errorf("changelog entry %d:\n%s", n, got)
	}
	if got := search(t, s, LatestDN, "(objectclass=*)"); !strings.Contains(got, "count: "+itoa(n)) {
		t.Errorf("latest change number:\n%s", got)
	}
	s.Stop()
	s.Restart()
	if got := search(t, s, UsersDN, "(uuid="+u.UUID+")"); !strings.Contains(got, "tritoncnsenabled: false") {
		t.Errorf("after restart:\n%s", got)
	}
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }
