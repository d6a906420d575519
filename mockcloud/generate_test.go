package mockcloud

import (
	"encoding/json"
	"net/netip"
	"strings"
	"testing"
)

func TestGenerateDeterministic(t *testing.T) {
	o := GenOptions{VMs: 200, Accounts: 20, Servers: 5, Seed: 42, Now: testNow}
	a, _ := json.Marshal(Generate(o))
	b, _ := json.Marshal(Generate(o))
	if string(a) != string(b) {
		t.Fatal("the same options gave two different clouds")
	}
	o.Seed = 43
	c, _ := json.Marshal(Generate(o))
	if string(a) == string(c) {
		t.Fatal("different seeds gave the same cloud")
	}
	zero, _ := json.Marshal(Generate(GenOptions{VMs: 3, Accounts: 2, Servers: 1, Seed: 1}))
	zero2, _ := json.Marshal(Generate(GenOptions{VMs: 3, Accounts: 2, Servers: 1, Seed: 1}))
	if string(zero) != string(zero2) {
		t.Fatal("a zero Now is not a fixed clock")
	}
}

// TestGenerateRealistic checks the generated cloud has the variety cnsd
// must handle, and that it is a valid fixture.
func TestGenerateRealistic(t *testing.T) {
	f := Generate(GenOptions{VMs: 300, Accounts: 20, Servers: 5, Seed: 3, Now: testNow})
	b, _ := json.Marshal(f)
	if _, err := DecodeFixture(strings.NewReader(string(b))); err != nil {
		t.Fatalf("generated fixture does not decode: %v", err)
	}
	count := map[string]int{}
	macs, ips := map[string]bool{}, map[string]bool{}
	for _, v := range f.VMs {
		count["state "+v.State]++
		if v.Alias != "" {
			count["alias"]++
		}
		if s, ok := v.Tags["triton.cns.services"].(string); ok && strings.Contains(s, ":") {
			count["services with port"]++
		}
		if _, ok := v.Tags["docker:label:triton.cns.services"]; ok {
			count["docker label"]++
		}
		if v.CustomerMetadata["triton.cns.status"] == "down" {
			count["status down"]++
		}
		for _, n := range v.NICs {
			if macs[n.MAC] {
				t.Errorf("MAC %s used twice", n.MAC)
			}
			macs[n.MAC] = true
			for _, ip := range n.IPs {
				if _, err := netip.ParsePrefix(ip); err != nil {
					t.Errorf("VM %s: ips %q: %v", v.UUID, ip, err)
				}
				if ips[ip] {
					t.Errorf("address %s used twice", ip)
				}
				ips[ip] = true
			}
			count["nic_tag "+n.NICTag]++
		}
	}
	for _, n := range f.Networks {
		if n.Fabric && len(n.OwnerUUIDs) == 1 {
			count["fabric"]++
		}
		if n.Family == "ipv6" {
			count["ipv6 network"]++
		}
	}
	for _, s := range f.Servers {
		if s.Status != "running" {
			count["server down"]++
		}
	}
	logins := map[string]bool{}
	for _, u := range f.Users {
		logins[u.Login] = true
		if u.TritonCNSEnabled != "true" {
			count["cns not enabled"]++
		}
	}
	for _, k := range []string{"state running", "state stopped", "state destroyed", "alias", "services with port",
		"docker label", "status down", "nic_tag admin", "nic_tag external", "nic_tag sdc_overlay", "fabric",
		"ipv6 network", "server down", "cns not enabled"} {
		if count[k] == 0 {
			t.Errorf("no %s in %v", k, count)
		}
	}
	if !logins["admin"] || !logins["poseidon"] {
		t.Errorf("logins %v lack admin or poseidon", logins)
	}
	if len(f.NetworkPools) == 0 || len(f.NetworkPools[0].Networks) == 0 {
		t.Errorf("no network pool: %v", f.NetworkPools)
	}
}

func TestLastAddr(t *testing.T) {
	tests := []struct{ prefix, want string }{
		{"10.88.0.0/16", "10.88.255.254"},
		{"192.168.1.0/24", "192.168.1.254"},
		{"fd00:88::/64", "fd00:88::ffff:ffff:ffff:ffff"},
	}
	for _, tt := range tests {
		t.Run(tt.prefix, func(t *testing.T) {
			if got := lastAddr(netip.MustParsePrefix(tt.prefix)).String(); got != tt.want {
				t.Errorf("lastAddr = %s, want %s", got, tt.want)
			}
		})
	}
}
