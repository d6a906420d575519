package main

import (
	"fmt"
	"net/netip"
	"strings"
	"testing"
	"time"

	"github.com/miekg/dns"

	"github.com/cnsd/cnsd/xfr/secondarytest"
)

// TestSecondariesFollowCloud is the product as operators run it: cnsd
// over the simulated cloud, hidden behind BIND, Knot and PowerDNS
// secondaries that follow its catalog zone and an NSD secondary with the
// zones listed. Every secondary answers a VM's names and PTR, a service
// tagged in the cloud, and the VM's destruction, by NOTIFY and transfer.
func TestSecondariesFollowCloud(t *testing.T) {
	const (
		zone    = "cloud.example.test"
		rev     = "2.0.192.in-addr.arpa"
		catalog = "catalog.cnsd.invalid"
		wait    = 30 * time.Second
	)
	c := startOverCloud(t, fmt.Sprintf(`%q: {"networks": ["*"]}`, zone))
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("cnsd's log:\n%s", c.stderr.String())
		}
	})
	inst := cloudVM + ".inst." + cloudOwner + "." + zone + "."
	waitFor(t, "cnsd to serve "+inst, func() bool { return answers(c.dns, inst, "192.0.2.11") })

	primary := netip.MustParseAddrPort(c.dns)
	secondaries := []*secondarytest.Secondary{
		secondarytest.StartBIND(t, secondarytest.Config{Primary: primary, Catalog: catalog}),
		secondarytest.StartKnot(t, secondarytest.Config{Primary: primary, Catalog: catalog}),
		secondarytest.StartPowerDNS(t, secondarytest.Config{Primary: primary, Catalog: catalog}),
		secondarytest.StartNSD(t, secondarytest.Config{Primary: primary, Zones: []string{zone, rev}}),
	}
	var peers []string
	for _, s := range secondaries {
		peers = append(peers, fmt.Sprintf("%q", s.Addr().String()))
	}
	list := strings.Join(peers, ", ")
	// The secondaries become the zones' peers, so NOTIFY goes to them.
	c.extra = fmt.Sprintf(`, "reverse_zones": {"peers": [%s]}, "catalog_zone": {"peers": [%s]}`, list, list)
	c.writeConfig(fmt.Sprintf(`%q: {"networks": ["*"], "peers": [%s]}`, zone, list))

	hasA := func(r *dns.Msg) bool { return hasRecord(r, "A", "192.0.2.11") }
	for _, s := range secondaries {
		s.WaitAnswer(t, inst, "A", wait, hasA)
		s.WaitAnswer(t, "11."+rev+".", "PTR", wait, func(r *dns.Msg) bool {
			return hasRecord(r, "PTR", inst)
		})
	}

	if _, err := c.cloud.SetTags(cloudVM, map[string]any{"triton.cns.services": "web,api"}); err != nil {
		t.Fatal(err)
	}
	api := "api.svc." + cloudOwner + "." + zone + "."
	for _, s := range secondaries {
		s.WaitAnswer(t, api, "A", wait, hasA)
	}

	if _, err := c.cloud.DestroyVM(cloudVM); err != nil {
		t.Fatal(err)
	}
	gone := func(r *dns.Msg) bool { return r != nil && r.Rcode == dns.RcodeNameError }
	waitFor(t, "cnsd to answer NXDOMAIN for "+inst, func() bool { return gone(ask(c.dns, inst, dns.TypeA)) })
	for _, s := range secondaries {
		s.WaitAnswer(t, inst, "A", wait, gone)
	}
}

// hasRecord reports whether the answer holds a record of type qtype
// whose data is data.
func hasRecord(r *dns.Msg, qtype, data string) bool {
	for _, rr := range r.Answer {
		if dns.TypeToString[rr.Header().Rrtype] != qtype {
			continue
		}
		if strings.TrimPrefix(rr.String(), rr.Header().String()) == data {
			return true
		}
	}
	return false
}
