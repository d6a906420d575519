package main

import (
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/miekg/dns"

	"github.com/cnsd/cnsd/api"
	"github.com/cnsd/cnsd/mockcloud"
)

// TestOperatorStateOverCloud drives the routes and cnsadm commands whose
// answers need state — a secondary that transferred, a pending
// self-removal, a held mass deletion — by making that state happen in the
// simulated cloud, and checks the API and cnsadm agree on it.
func TestOperatorStateOverCloud(t *testing.T) {
	zones := `"cloud.example.test": {"networks": ["*"]}`
	c := startOverMockWith(t, mockcloud.New(cloudFixture(), nil), zones, func(c *overCloud) {
		// One transfer is enough for a learnt peer, so that the test's
		// address becomes one.
		c.extra = `, "learn_peers": {"enabled": true, "after_transfers": 1}`
	})
	cnsadm := cnsadmFor(t, c)
	// Five more VMs on the one compute node, so that the node going down
	// removes well over the guard's share and minimum.
	var vms []string
	for i := 2; i <= 6; i++ {
		uuid := fmt.Sprintf("0000000%d-0000-4000-8000-00000000000%d", i, i)
		vms = append(vms, uuid)
		_, err := c.cloud.CreateVM(mockcloud.VM{UUID: uuid, OwnerUUID: cloudOwner, ServerUUID: cloudServer, Alias: fmt.Sprintf("db%d", i),
			Brand: "joyent", Tags: map[string]any{"triton.cns.services": "db"},
			NICs: []mockcloud.NIC{{Interface: "net0", MAC: fmt.Sprintf("90:b8:d0:00:00:2%d", i), NICTag: "external",
				IP: fmt.Sprintf("192.0.2.2%d", i), NetworkUUID: cloudNet}}})
		if err != nil {
			t.Fatal(err)
		}
	}
	for i, uuid := range vms {
		name := uuid + ".inst." + cloudOwner + ".cloud.example.test."
		waitFor(t, name, func() bool { return answers(c.dns, name, fmt.Sprintf("192.0.2.2%d", i+2)) })
	}

	// A transfer makes the test's address a learnt peer.
	if n := axfrCount(c.dns, "cloud.example.test."); n < 12 {
		t.Fatalf("AXFR of cloud.example.test: %d records", n)
	}
	// cnsd records the transfer after its last message, which the
	// client may have read before.
	var peers []api.Peer
	waitFor(t, "the learnt peer", func() bool { getJSON(t, c.api+"/peers", &peers); return len(peers) > 0 })
	if len(peers) != 1 || peers[0].Address != "127.0.0.1" {
		t.Fatalf("GET /peers after an AXFR from 127.0.0.1: %+v", peers)
	}
	var peer api.Peer
	getJSON(t, c.api+"/peer/127.0.0.1", &peer)
	// No serial is confirmed: the test answers no SOA query as a secondary would.
	if len(peer.Zones) != 1 || peer.Zones[0].Zone != "cloud.example.test" || peer.Zones[0].AXFR != 1 {
		t.Errorf("GET /peer/127.0.0.1 = %+v, want one AXFR of cloud.example.test", peer)
	}
	wantOutput(t, cnsadm, []string{"peers"}, "127.0.0.1")
	wantOutput(t, cnsadm, []string{"peers", "show", "127.0.0.1"}, "cloud.example.test")

	// The last member of a service reports itself down: its removal waits
	// for last_member_delay_seconds, and is visible until then.
	if _, err := c.cloud.SetCustomerMetadata(cloudVM, map[string]any{"triton.cns.status": "down"}); err != nil {
		t.Fatal(err)
	}
	var pending []api.PendingRemoval
	waitFor(t, "the pending removal of the web service's last member", func() bool {
		getJSON(t, c.api+"/pending-removals", &pending)
		return len(pending) == 1
	})
	if pending[0].VM != cloudVM || !strings.HasSuffix(pending[0].Service, "/web") || pending[0].Due.Before(time.Now().Add(time.Minute)) {
		t.Errorf("pending removal %+v, want %s leaving web in about 600 s", pending[0], cloudVM)
	}
	if !answers(c.dns, "web.svc."+cloudOwner+".cloud.example.test.", "192.0.2.11") {
		t.Error("the web service lost its member before the removal fell due")
	}
	wantOutput(t, cnsadm, []string{"vm", cloudVM}, "pending")

	// The compute node goes down: every VM's records would go at once,
	// which the guard holds until the operator confirms.
	status, beat := "unknown", time.Now().Add(-2*time.Hour).UTC().Format(time.RFC3339)
	if _, err := c.cloud.UpdateServer(cloudServer, mockcloud.ServerPatch{Status: &status, LastHeartbeat: &beat}); err != nil {
		t.Fatal(err)
	}
	var held []api.HeldDeletion
	waitFor(t, "the held deletion of the down compute node's VMs", func() bool {
		getJSON(t, c.api+"/held-deletions", &held)
		return len(held) == 1
	})
	if held[0].Cause != "compute-nodes" || len(held[0].VMs) != 6 {
		t.Errorf("held deletion %+v, want cause compute-nodes and the node's 6 VMs", held[0])
	}
	wantOutput(t, cnsadm, []string{"status"}, "compute-nodes")
	if !answers(c.dns, "db.svc."+cloudOwner+".cloud.example.test.", "192.0.2.22") {
		t.Error("a held deletion was published")
	}
	wantOutput(t, cnsadm, []string{"confirm", "compute-nodes"}, "compute-nodes")
	// A down node's VMs leave their services (the names keep only their
	// "verifying:" TXT records); their instance names stay.
	for _, service := range []string{"web", "db"} {
		name := service + ".svc." + cloudOwner + ".cloud.example.test."
		waitFor(t, "no A records for "+name+" after the confirmation", func() bool {
			r := ask(c.dns, name, dns.TypeA)
			return r != nil && r.Rcode == dns.RcodeSuccess && len(r.Answer) == 0
		})
	}
	if !answers(c.dns, vms[0]+".inst."+cloudOwner+".cloud.example.test.", "192.0.2.22") {
		t.Error("an instance name of a VM on the down node went")
	}
	getJSON(t, c.api+"/held-deletions", &held)
	if len(held) != 0 {
		t.Errorf("held deletions after the confirmation: %+v", held)
	}

	// Forgetting the peer.
	wantOutput(t, cnsadm, []string{"peers", "forget", "127.0.0.1"}, "127.0.0.1")
	resp, err := authed.Get(c.api + "/peer/127.0.0.1")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusNotFound {
		t.Errorf("GET /peer/127.0.0.1 after forget: %d, want 404", resp.StatusCode)
	}
}

func wantOutput(t *testing.T, cnsadm func(...string) (string, error), args []string, want string) {
	t.Helper()
	out, err := cnsadm(args...)
	if err != nil {
		t.Fatalf("cnsadm %q: %v\n%s", args, err, out)
	}
	if !strings.Contains(out, want) {
		t.Errorf("cnsadm %q lacks %q:\n%s", args, want, out)
	}
}
