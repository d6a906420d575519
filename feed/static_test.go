package feed

import (
	"context"
	"errors"
	"slices"
	"testing"

	"github.com/cnsd/cnsd/zonegen"
)

// staticDump is a small cloud dump with what the live decoders accept and
// a plain JSON decoding would not: a numeric metadata value, a string
// "setup", extra keys, a VM that does not decode, and a NAPI NIC table.
const staticDump = `{
 "vms": [
  {"uuid": "00000001-0000-4000-8000-000000000001", "owner_uuid": "a11ce000-0000-4000-8000-000000000001",
   "state": "running", "server_uuid": "c0000000-0000-4000-8000-00000000000c", "brand": "joyent",
   "customer_metadata": {"triton.cns.status": "up", "n": 3},
   "nics": [{"mac": "90:b8:d0:00:00:01", "ip": "192.0.2.1"}, {"mac": "90:b8:d0:00:00:02", "ip": "192.0.2.2",
     "network_uuid": "e0000000-0000-4000-8000-00000000000e"}]},
  {"uuid": "00000002-0000-4000-8000-000000000002", "state": 7},
  {"uuid": "00000003-0000-4000-8000-000000000003", "state": "destroyed",
   "nics": [{"mac": "90:b8:d0:00:00:03", "network_uuid": "e0000000-0000-4000-8000-00000000000e"}]}
 ],
 "users": [{"uuid": "a11ce000-0000-4000-8000-000000000001", "login": "alice", "triton_cns_enabled": true, "email": "a@b"}],
 "servers": [{"uuid": "c0000000-0000-4000-8000-00000000000c", "setup": "true", "status": "running", "sysinfo": {}},
   {"uuid": "c0000000-0000-4000-8000-00000000000d", "setup": false, "status": "running"}],
 "networks": [{"uuid": "e0000000-0000-4000-8000-00000000000e", "name": "external", "subnet": "192.0.2.0/24"}],
 "network_pools": [{"uuid": "f0000000-0000-4000-8000-00000000000f", "name": "public",
   "networks": ["e0000000-0000-4000-8000-00000000000e"]}],
 "nics": [{"mac": "90b8d0000001", "network_uuid": "e0000000-0000-4000-8000-00000000000e", "ip": "192.0.2.1",
   "nic_tag": "external", "belongs_to_type": "zone", "belongs_to_uuid": "00000001-0000-4000-8000-000000000001"}]
}`

// TestStaticReadsDumpAsFeedDoes: a dump is decoded by the live API
// decoders, and the lookups answer as the live clients do.
func TestStaticReadsDumpAsFeedDoes(t *testing.T) {
	s, err := ReadStatic([]byte(staticDump))
	if err != nil {
		t.Fatal(err)
	}
	if len(s.VMs) != 2 || len(s.Unreadable) != 1 || s.VMs[0].CustomerMetadata["n"] != "3" {
		t.Fatalf("VMs %+v, unreadable %q: want two, the second unreadable, metadata n read as text", s.VMs, s.Unreadable)
	}
	ctx := context.Background()
	if a, err := s.User(ctx, "a11ce000-0000-4000-8000-000000000001"); err != nil || !a.TritonCNSEnabled.Set() {
		t.Errorf("User = %+v, %v", a, err)
	}
	if _, err := s.User(ctx, "b0b00000-0000-4000-8000-000000000001"); !errors.Is(err, ErrNoAccount) {
		t.Errorf("unknown user: %v, want ErrNoAccount", err)
	}
	if srv, ok := s.Server("c0000000-0000-4000-8000-00000000000c"); !ok || !srv.Setup {
		t.Errorf("Server = %+v, %v: want setup (from the string \"true\")", srv, ok)
	}
	if _, ok := s.Server("c0000000-0000-4000-8000-00000000000d"); ok {
		t.Error("a server not set up is known; CNAPI does not list it to cnsd")
	}
	if n, err := s.Network(ctx, "e0000000-0000-4000-8000-00000000000e"); err != nil || !slices.Equal(n.Pools, []string{"f0000000-0000-4000-8000-00000000000f"}) {
		t.Errorf("Network = %+v, %v: want it in the public pool", n, err)
	}
	if _, err := s.Network(ctx, "e0000000-0000-4000-8000-000000000099"); !errors.Is(err, ErrNotFound) {
		t.Errorf("unknown network: %v, want ErrNotFound", err)
	}
	const vm1 = "00000001-0000-4000-8000-000000000001"
	tests := []struct {
		name, vm, mac string
		wantNetwork   string
		wantErr       error
	}{
		{"from the NIC table", vm1, "90:B8:D0:00:00:01", "e0000000-0000-4000-8000-00000000000e", nil},
		{"from a VM's NIC", vm1, "90-b8-d0-00-00-02", "e0000000-0000-4000-8000-00000000000e", nil},
		{"a destroyed VM's NIC is freed", vm1, "90:b8:d0:00:00:03", "", ErrNotFound},
		{"unknown", vm1, "90:b8:d0:00:00:09", "", ErrNotFound},
		{"malformed", vm1, "90:b8", "", errBadMAC},
		{"another VM's NIC", "00000009-0000-4000-8000-000000000009", "90:b8:d0:00:00:01", "", errNotTheVMs},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := s.RepairNIC(ctx, tc.vm, zonegen.NIC{MAC: tc.mac})
			if !errors.Is(err, tc.wantErr) || (tc.wantErr == nil) != (err == nil) || got.NetworkUUID != tc.wantNetwork {
				t.Errorf("RepairNIC(%s) = %+v, %v; want network %q, error %v", tc.mac, got, err, tc.wantNetwork, tc.wantErr)
			}
		})
	}
}

// TestStaticRefusesBrokenReferences: what VMs refer to must decode.
func TestStaticRefusesBrokenReferences(t *testing.T) {
	for _, doc := range []string{`[]`, `{"users": [{"login": "x"}]}`, `{"servers": [{"setup": true}]}`,
		`{"networks": [3]}`, `{"network_pools": [{"name": "p"}]}`, `{"nics": [{"ip": "192.0.2.1"}]}`} {
		if _, err := ReadStatic([]byte(doc)); err == nil {
			t.Errorf("ReadStatic(%s) succeeded, want an error", doc)
		}
	}
}
