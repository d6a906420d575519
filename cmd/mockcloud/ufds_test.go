package main

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/cnsd/cnsd/mockcloud/ufds"
)

// TestRunServesUFDS runs mockcloud with -ufds: the accounts are in slapd,
// and an account changed through the admin API reaches its entry and the
// changelog.
func TestRunServesUFDS(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	pr, pw := io.Pipe()
	done := make(chan error, 1)
	go func() {
		done <- run(ctx, []string{"-listen", "127.0.0.1:0", "-generate", "4,2,1", "-ufds", "127.0.0.1:0"}, pw, io.Discard)
		pw.Close()
	}()
	var base, ldapURL string
	for sc := bufio.NewScanner(pr); (base == "" || ldapURL == "") && sc.Scan(); {
		f := strings.Fields(sc.Text())
		switch {
		case len(f) >= 2 && f[0] == "admin":
			base = strings.TrimSuffix(f[1], "/_mock/fixture")
		case len(f) >= 2 && f[0] == "UFDS":
			ldapURL = f[1]
		}
	}
	if base == "" || ldapURL == "" {
		t.Fatalf("no admin or UFDS URL printed (%v)", <-done)
	}
	go io.Copy(io.Discard, pr)
	search := func(base, filter string) string {
		out, err := exec.Command("ldapsearch", "-x", "-LLL", "-H", ldapURL, "-b", base, filter).CombinedOutput()
		if err != nil {
			t.Fatalf("ldapsearch: %v: %s", err, out)
		}
		return string(out)
	}
	var users []struct{ UUID, Login string }
	getJSON(t, base+"/_mock/users", &users)
	if len(users) == 0 {
		t.Fatal("no users")
	}
	uuid := users[0].UUID
	if got := search(ufds.UsersDN, "(uuid="+uuid+")"); !strings.Contains(got, "login: "+users[0].Login) {
		t.Fatalf("user %s not in slapd:\n%s", uuid, got)
	}
	req, _ := http.NewRequest(http.MethodPatch, base+"/_mock/users/"+uuid, strings.NewReader(`{"login": "renamed"}`))
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("PATCH user: %s", resp.Status)
	}
	deadline := time.Now().Add(10 * time.Second)
	for !strings.Contains(search(ufds.UsersDN, "(uuid="+uuid+")"), "login: renamed") ||
		!strings.Contains(search(ufds.ChangelogDN, "(objectclass=changeLogEntry)"), "targetdn: uuid="+uuid) {
		if time.Now().After(deadline) {
			t.Fatalf("the login change did not reach slapd's entry and changelog:\n%s\n%s",
				search(ufds.UsersDN, "(uuid="+uuid+")"), search(ufds.ChangelogDN, "(objectclass=*)"))
		}
		time.Sleep(50 * time.Millisecond)
	}
	cancel()
	if err := <-done; err != nil {
		t.Errorf("run after cancel: %v", err)
	}
}

func getJSON(t *testing.T, url string, v any) {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if err := json.NewDecoder(resp.Body).Decode(v); err != nil {
		t.Fatalf("GET %s: %v", url, err)
	}
}

func TestUFDSFlag(t *testing.T) {
	for _, bad := range []string{"192.0.2.1:1389", "127.0.0.1", "127.0.0.1:x", "127.0.0.1:70000"} {
		if _, err := ufdsPort(bad); err == nil {
			t.Errorf("-ufds %q accepted", bad)
		}
	}
	if p, err := ufdsPort("127.0.0.1:1389"); err != nil || p != 1389 {
		t.Errorf("-ufds 127.0.0.1:1389 = %d, %v", p, err)
	}
}
