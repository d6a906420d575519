package main

import (
	"fmt"
	"net/netip"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/miekg/dns"

	"github.com/cnsd/cnsd/api"
	"github.com/cnsd/cnsd/mockcloud"
	"github.com/cnsd/cnsd/xfr/secondarytest"
)

const (
	// webMembers is how many running VMs carry the service web: more
	// than BIND's default max-records-per-type (100).
	webMembers = 200
	// cloudNet2 is a second external network, for a second reverse zone.
	cloudNet2 = "e0000000-0000-4000-8000-00000000000f"
	// xfrSecret is the secret of cnsd's key cnsd-xfr, the name the
	// shipped configurations use; they ship another secret.
	xfrSecret = "dGhlIHNoaXBwZWQgY29uZmlncyd0ZXN0IHNlY3JldA=="
)

// TestSecondariesFromShippedConfigs is a deployment as the operator
// guide describes it, with nothing of the harness's own configurations:
// BIND configured from cnsadm bind-config's output (catalog form and
// zone-list form), Knot from deploy/knot/knot.conf and NSD from
// deploy/nsd/nsd.conf, with only what their comments (or a host running
// several servers) tell an operator to replace, by the visible edits of
// bindFromCnsadm, knotFromShipped and nsdFromShipped. cnsd follows a
// cloud whose service web has 200 members, more than BIND's default
// max-records-per-type, with transfers signed by the key the shipped
// files name. Every zone cnsd serves loads on every secondary, with
// cnsd's SOA and the 200 A records of the service; a member leaving the
// service by a tag change, a destroyed member and a new service's VM
// reach every secondary by NOTIFY and transfer.
func TestSecondariesFromShippedConfigs(t *testing.T) {
	const (
		zone = "cloud.example.test"
		wait = 30 * time.Second
	)
	withKey := func(peers, catalogPeers string) string {
		return fmt.Sprintf(`, "tsig_keys": {"cnsd-xfr": {"algorithm": "hmac-sha256", "secret": %q}},
  "reverse_zones": {"tsig_key": "cnsd-xfr"%s}, "catalog_zone": {"tsig_key": "cnsd-xfr"%s}`, xfrSecret, peers, catalogPeers)
	}
	zoneConf := func(peers string) string {
		return fmt.Sprintf(`%q: {"networks": ["*"], "tsig_key": "cnsd-xfr"%s}`, zone, peers)
	}
	c := startOverMockWith(t, mockcloud.New(bigServiceFixture(), nil), zoneConf(""), func(c *overCloud) { c.extra = withKey("", "") })
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("cnsd's log:\n%s", c.stderr.String())
		}
	})
	web := "web.svc." + cloudOwner + "." + zone + "."
	waitFor(t, fmt.Sprintf("cnsd to answer %d A records for %s", webMembers, web), func() bool {
		r := askTCP(c.dns, web, dns.TypeA)
		return r != nil && len(r.Answer) == webMembers
	})

	var zones []api.Zone
	getJSON(t, c.api+"/zones", &zones)
	var names, members []string
	for _, z := range zones {
		names = append(names, z.Name)
		if z.Name != "catalog.cnsd.invalid" {
			members = append(members, z.Name)
		}
	}
	for _, want := range []string{zone, "2.0.192.in-addr.arpa", "100.51.198.in-addr.arpa", "catalog.cnsd.invalid"} {
		if !slices.Contains(names, want) {
			t.Fatalf("cnsd serves %v, not %s", names, want)
		}
	}

	cnsadm := cnsadmFor(t, c)
	catalogConf := bindConfig(t, cnsadm, "-catalog")
	zonesConf := bindConfig(t, cnsadm)
	primary := netip.MustParseAddrPort(c.dns)
	knot := readShipped(t, "knot/knot.conf")
	nsd := readShipped(t, "nsd/nsd.conf")
	secondaries := []struct {
		name     string
		catalog  bool // follows the catalog zone, and so serves it
		instance *secondarytest.Secondary
	}{
		{"BIND from bind-config -catalog", true, secondarytest.StartFrom(t, "bind", netip.Addr{}, func(s secondarytest.Site) string {
			return bindFromCnsadm(t, catalogConf, s)
		})},
		{"BIND from bind-config", false, secondarytest.StartFrom(t, "bind", netip.Addr{}, func(s secondarytest.Site) string {
			return bindFromCnsadm(t, zonesConf, s)
		})},
		{"Knot from deploy/knot/knot.conf", true, secondarytest.StartFrom(t, "knot", netip.Addr{}, func(s secondarytest.Site) string {
			return knotFromShipped(t, knot, s, primary)
		})},
		{"NSD from deploy/nsd/nsd.conf", false, secondarytest.StartFrom(t, "nsd", netip.Addr{}, func(s secondarytest.Site) string {
			return nsdFromShipped(t, nsd, s, primary, members)
		})},
	}
	var peers, catalogPeers []string
	for _, s := range secondaries {
		peers = append(peers, strconv.Quote(s.instance.Addr().String()))
		if s.catalog {
			catalogPeers = append(catalogPeers, strconv.Quote(s.instance.Addr().String()))
		}
	}
	list := func(peers []string) string { return fmt.Sprintf(`, "peers": [%s]`, strings.Join(peers, ", ")) }
	// The secondaries become the zones' peers, so NOTIFY goes to them;
	// those that follow the catalog are its peers.
	c.extra = withKey(list(peers), list(catalogPeers))
	c.writeConfig(zoneConf(list(peers)))
	waitFor(t, "cnsd to reload its configuration with the peers", func() bool {
		return len(c.stderr.Lines("configuration reloaded")) > 0
	})

	// same waits until s answers name and qtype as cnsd does (TCP, so
	// never rate limited), records compared without their TTLs.
	same := func(s *secondarytest.Secondary, name string, qtype uint16) *dns.Msg {
		t.Helper()
		return s.WaitAnswer(t, name, dns.TypeToString[qtype], wait, func(r *dns.Msg) bool {
			want := askTCP(c.dns, name, qtype)
			return want != nil && r.Rcode == want.Rcode &&
				slices.Equal(secondarytest.RRsets(r.Answer), secondarytest.RRsets(want.Answer))
		})
	}
	loaded := func(stage string) {
		t.Helper()
		for _, s := range secondaries {
			for _, z := range names {
				switch {
				case z != "catalog.cnsd.invalid":
					same(s.instance, z+".", dns.TypeSOA)
				case s.instance.Kind() == "knot":
					// Knot refuses queries for a catalog zone it
					// interprets; its log has the serial it loaded.
					r := askTCP(c.dns, z+".", dns.TypeSOA)
					if r == nil || len(r.Answer) != 1 {
						t.Fatalf("cnsd's SOA of %s: %v", z, r)
					}
					s.instance.WaitLog(t, wait, "["+z+".]", fmt.Sprintf("-> %d", r.Answer[0].(*dns.SOA).Serial))
				case s.catalog:
					same(s.instance, z+".", dns.TypeSOA)
				}
			}
			t.Logf("%s: %s serves every zone at cnsd's serial", stage, s.name)
		}
	}
	loaded("first transfer")
	for _, s := range secondaries {
		if r := same(s.instance, web, dns.TypeA); len(r.Answer) != webMembers {
			t.Errorf("%s answers %d A records for %s, want %d", s.name, len(r.Answer), web, webMembers)
		}
	}

	// A member leaves the service by a tag change, another is destroyed,
	// a new VM brings a new service.
	left, gone, added := webVM(0), webVM(150), webVM(webMembers)
	if _, err := c.cloud.SetTags(left.UUID, map[string]any{}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.cloud.DestroyVM(gone.UUID); err != nil {
		t.Fatal(err)
	}
	added.Tags = map[string]any{"triton.cns.services": "db"}
	if _, err := c.cloud.CreateVM(added); err != nil {
		t.Fatal(err)
	}
	db := "db.svc." + cloudOwner + "." + zone + "."
	waitFor(t, "cnsd to serve the changes", func() bool {
		w, d := askTCP(c.dns, web, dns.TypeA), askTCP(c.dns, db, dns.TypeA)
		return w != nil && len(w.Answer) == webMembers-2 && d != nil && len(d.Answer) == 1
	})
	inst := func(vm mockcloud.VM) string { return vm.UUID + ".inst." + cloudOwner + "." + zone + "." }
	ptr := func(vm mockcloud.VM) string {
		name, err := dns.ReverseAddr(vm.NICs[0].IP)
		if err != nil {
			t.Fatal(err)
		}
		return name
	}
	for _, s := range secondaries {
		same(s.instance, web, dns.TypeA)
		same(s.instance, db, dns.TypeA)
		same(s.instance, inst(left), dns.TypeA)
		same(s.instance, inst(gone), dns.TypeA)
		same(s.instance, ptr(gone), dns.TypePTR)
		same(s.instance, ptr(added), dns.TypePTR)
	}
	loaded("after the changes")
}

// bigServiceFixture is cloudFixture with webMembers running VMs of
// cloudOwner in the service web instead of its VM, half on each of two
// external networks.
func bigServiceFixture() *mockcloud.Fixture {
	f := cloudFixture()
	f.Networks = append(f.Networks, mockcloud.Network{UUID: cloudNet2, Name: "external2", Family: "ipv4", NICTag: "external", Subnet: "198.51.100.0/24"})
	f.VMs = nil
	for i := range webMembers {
		f.VMs = append(f.VMs, webVM(i))
	}
	return f
}

// webVM is the i-th member of the service web: 192.0.2.10 and on for the
// first 100, 198.51.100.10 and on for the next.
func webVM(i int) mockcloud.VM {
	network, ip := cloudNet, fmt.Sprintf("192.0.2.%d", 10+i)
	if i >= 100 {
		network, ip = cloudNet2, fmt.Sprintf("198.51.100.%d", 10+i-100)
	}
	return mockcloud.VM{UUID: fmt.Sprintf("00000002-0000-4000-8000-%012d", i), Alias: fmt.Sprintf("web%03d", i),
		OwnerUUID: cloudOwner, ServerUUID: cloudServer, State: "running", Brand: "joyent",
		Tags: map[string]any{"triton.cns.services": "web"},
		NICs: []mockcloud.NIC{{Interface: "net0", MAC: fmt.Sprintf("90:b8:d0:01:%02x:%02x", i/256, i%256),
			NICTag: "external", IP: ip, NetworkUUID: network}}}
}

// askTCP asks addr over TCP: cnsd limits the rate of UDP answers to a
// client, not of TCP ones, and 200 A records need TCP anyway.
func askTCP(addr, name string, qtype uint16) *dns.Msg {
	m := new(dns.Msg).SetQuestion(name, qtype)
	r, _, err := (&dns.Client{Net: "tcp", Timeout: 2 * time.Second}).Exchange(m, addr)
	if err != nil {
		return nil
	}
	return r
}

// bindConfig runs cnsadm bind-config with args and checks that its
// output lets BIND load the service's RRset without being told to.
func bindConfig(t *testing.T, cnsadm func(...string) (string, error), args ...string) string {
	t.Helper()
	out, err := cnsadm(append([]string{"bind-config"}, args...)...)
	if err != nil {
		t.Fatalf("cnsadm bind-config %v: %v\n%s", args, err, out)
	}
	m := regexp.MustCompile(`max-records-per-type (\d+);`).FindStringSubmatch(out)
	if m == nil {
		t.Fatalf("cnsadm bind-config %v sets no max-records-per-type for a service of %d members:\n%s", args, webMembers, out)
	}
	if n, _ := strconv.Atoi(m[1]); n < webMembers {
		t.Fatalf("cnsadm bind-config %v sets max-records-per-type %d, under the service's %d members:\n%s", args, n, webMembers, out)
	}
	return out
}

func readShipped(t *testing.T, name string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "..", "deploy", name))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// edit is one change an operator makes to a file cnsd ships or prints:
// every occurrence of old becomes new. why is the instruction followed.
type edit struct{ old, new, why string }

// edited applies edits to the file name's text, failing when one no
// longer finds its text: the file changed and the test must follow.
func edited(t testing.TB, name, text string, edits ...edit) string {
	t.Helper()
	for _, e := range edits {
		if !strings.Contains(text, e.old) {
			t.Fatalf("%s no longer holds %q, which the test replaces (%s):\n%s", name, e.old, e.why, text)
		}
		text = strings.ReplaceAll(text, e.old, e.new)
	}
	return text
}

// bindFromCnsadm is named.conf from cnsadm bind-config's output: the
// operator's own options — directory, listen-on, and recursion no as in
// deploy/bind — are added to the options block it prints (catalog form),
// or make one (zone-list form); the rest is the harness's (its pid and
// session key files in the directory, the id.server it checks, no
// control channel, which several named on one host would fight over).
//
// recursion no matters to the catalog form: with recursion on, BIND's
// default, named makes its automatic empty zones (RFC 6303), among them
// 2.0.192.in-addr.arpa and 100.51.198.in-addr.arpa, and refuses a
// catalog member of the same name ("will not be added because it is an
// explicitly configured zone"); zone statements replace them.
func bindFromCnsadm(t testing.TB, out string, s secondarytest.Site) string {
	t.Helper()
	// Zone files go to "cnsd/ZONE.db", and member zones of the catalog
	// to zone-directory "cnsd": the operator makes the directory.
	if err := os.MkdirAll(filepath.Join(s.Dir, "cnsd"), 0o755); err != nil {
		t.Fatal(err)
	}
	own := fmt.Sprintf("\tdirectory %q;\n\trecursion no;\n\tlisten-on port %d { %s; };\n\tlisten-on-v6 { none; };\n"+
		"\tpid-file %q;\n\tsession-keyfile %q;\n\tserver-id %q;\n",
		s.Dir, s.Addr.Port(), s.Addr.Addr(), filepath.Join(s.Dir, "named.pid"), filepath.Join(s.Dir, "session.key"), s.Identity)
	if strings.Contains(out, "options {\n") {
		out = edited(t, "cnsadm bind-config -catalog", out, edit{"options {\n", "options {\n" + own, "directory, listen-on"})
	} else {
		out = "options {\n" + own + "};\n" + out
	}
	return "controls { };\n" + out
}

// knotFromShipped is deploy/knot/knot.conf with what its comments tell
// an operator to replace: cnsd's address (and port), the key's secret,
// the listen address, the storage directory (/var/lib/knot on Debian,
// which the package makes). The harness adds its run directory (for the
// control socket), id.server, a log on stderr and the database beside
// the zones.
func knotFromShipped(t testing.TB, text string, s secondarytest.Site, cnsd netip.AddrPort) string {
	t.Helper()
	lib := filepath.Join(s.Dir, "lib")
	if err := os.MkdirAll(lib, 0o755); err != nil {
		t.Fatal(err)
	}
	return edited(t, "deploy/knot/knot.conf", text,
		edit{"listen: [ 0.0.0.0@53, ::@53 ]", fmt.Sprintf("listen: %s@%d\n    rundir: %q\n    identity: %q", s.Addr.Addr(), s.Addr.Port(), s.Dir, s.Identity),
			"listen address; the harness's run directory and id.server"},
		edit{"secret: c2VjcmV0IGtleSBmb3IgdHJhbnNmZXJz", "secret: " + xfrSecret, "the key in cnsd's tsig_keys"},
		edit{"address: 192.0.2.1@53", fmt.Sprintf("address: %s@%d", cnsd.Addr(), cnsd.Port()), "cnsd's address"},
		edit{"address: 192.0.2.1\n", fmt.Sprintf("address: %s\n", cnsd.Addr()), "cnsd's address"},
		edit{"/var/lib/knot", lib, "the storage directory"},
		edit{"template:\n", fmt.Sprintf("template:\n  - id: default\n    storage: %q\n", lib),
			"the harness's: zones without a template (the catalog) in the storage directory, not the compiled-in /var/lib/knot"},
	) + fmt.Sprintf("\ndatabase:\n    storage: %q\n\nlog:\n  - target: stderr\n    any: info\n", lib)
}

// nsdFromShipped is deploy/nsd/nsd.conf with what its comments tell an
// operator to replace: cnsd's address (and port), the key's secret, the
// listen address, the zones directory and the zone list (every zone
// cnsd serves but the catalog). The harness adds, beside zonesdir, what
// a server run by an unprivileged user in one directory needs (no
// chroot or user switch, its files there), id.server and a log of every
// transfer.
func nsdFromShipped(t testing.TB, text string, s secondarytest.Site, cnsd netip.AddrPort, zones []string) string {
	t.Helper()
	var list strings.Builder
	for i, z := range zones {
		if i > 0 {
			list.WriteString("\n")
		}
		fmt.Fprintf(&list, "zone:\n\tname: %q\n\tinclude-pattern: \"cnsd\"\n", z)
	}
	own := fmt.Sprintf("zonesdir: %q\n\tusername: \"\"\n\tchroot: \"\"\n\tdatabase: \"\"\n\tzonelistfile: %q\n\txfrdfile: %q\n"+
		"\txfrdir: %q\n\tpidfile: %q\n\tidentity: %q\n\tverbosity: 2",
		s.Dir, filepath.Join(s.Dir, "zone.list"), filepath.Join(s.Dir, "xfrd.state"), s.Dir, filepath.Join(s.Dir, "nsd.pid"), s.Identity)
	return edited(t, "deploy/nsd/nsd.conf", text,
		edit{"\tip-address: 0.0.0.0\n\tip-address: ::0\n", fmt.Sprintf("\tip-address: %s@%d\n", s.Addr.Addr(), s.Addr.Port()), "listen address"},
		edit{`zonesdir: "/var/lib/nsd"`, own, "zones directory; the harness's files, id.server and log"},
		edit{`secret: "c2VjcmV0IGtleSBmb3IgdHJhbnNmZXJz"`, fmt.Sprintf("secret: %q", xfrSecret), "the key in cnsd's tsig_keys"},
		edit{"request-xfr: 192.0.2.1 ", fmt.Sprintf("request-xfr: %s@%d ", cnsd.Addr(), cnsd.Port()), "cnsd's address"},
		edit{"allow-notify: 192.0.2.1 ", fmt.Sprintf("allow-notify: %s ", cnsd.Addr()), "cnsd's address"},
		edit{"zone:\n\tname: \"dc1.cns.example.com\"\n\tinclude-pattern: \"cnsd\"\n\nzone:\n\tname: \"2.0.192.in-addr.arpa\"\n\tinclude-pattern: \"cnsd\"\n",
			list.String(), "a zone: entry for every zone cnsd serves (cnsadm zones)"},
	)
}
