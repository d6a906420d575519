package feed

import (
	"slices"
	"testing"

	"github.com/cnsd/cnsd/zonegen"
)

func TestDecodeNetwork(t *testing.T) {
	tests := []struct {
		name    string
		body    string
		want    zonegen.Network
		wantErr bool
	}{
		{name: "napi shape",
			body: `{"uuid":"n","name":"external","family":"ipv4","vlan_id":0,"nic_tag":"external",
				"subnet":"10.88.0.0/16","provision_start_ip":"10.88.0.2","resolvers":[],"mtu":1500}`,
			want: zonegen.Network{UUID: "n", Name: "external"}},
		{name: "fabric", body: `{"uuid":"n","name":"My Fabric","fabric":true,"owner_uuids":["o1","o2"]}`,
			want: zonegen.Network{UUID: "n", Name: "My Fabric", OwnerUUIDs: []string{"o1", "o2"}}},
		{name: "null owners", body: `{"uuid":"n","name":"x","owner_uuids":null}`, want: zonegen.Network{UUID: "n", Name: "x"}},
		{name: "no uuid", body: `{"name":"x"}`, wantErr: true},
		{name: "owners not a list", body: `{"uuid":"n","owner_uuids":"o1"}`, wantErr: true},
		{name: "name not a string", body: `{"uuid":"n","name":5}`, wantErr: true},
		{name: "list", body: `[{"uuid":"n"}]`, wantErr: true},
		{name: "not json", body: `<html>`, wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := decodeNetwork([]byte(tt.body))
			if (err != nil) != tt.wantErr {
				t.Fatalf("err = %v, want error %v", err, tt.wantErr)
			}
			if got.UUID != tt.want.UUID || got.Name != tt.want.Name || !slices.Equal(got.OwnerUUIDs, tt.want.OwnerUUIDs) || got.Pools != nil {
				t.Errorf("got %+v, want %+v", got, tt.want)
			}
		})
	}
}

func TestDecodePools(t *testing.T) {
	pools, bad, err := decodePools([]byte(`[
		{"uuid":"p1","name":"public","family":"ipv4","networks":["n1","n2"],"nic_tag":"external"},
		{"uuid":"p2","name":"empty","networks":[]},
		{"uuid":"p3","networks":"n1"},
		{"name":"nameless"},
		42]`))
	if err != nil {
		t.Fatal(err)
	}
	if len(pools) != 2 || pools[0].UUID != "p1" || !slices.Equal(pools[0].Networks, []string{"n1", "n2"}) || pools[1].UUID != "p2" {
		t.Errorf("pools = %+v", pools)
	}
	var ids []string
	for _, b := range bad {
		ids = append(ids, b.ID)
	}
	if !slices.Equal(ids, []string{"p3", "", ""}) {
		t.Errorf("bad ids = %q", ids)
	}
	if _, _, err := decodePools([]byte(`{"code":"InternalError"}`)); err == nil {
		t.Error("an error body decoded as a pool list")
	}
}

func TestDecodeNIC(t *testing.T) {
	tests := []struct {
		name    string
		body    string
		want    zonegen.NIC
		wantErr bool
	}{
		{name: "napi shape",
			body: `{"mac":"90:b8:d0:00:00:01","ip":"10.88.1.2","ips":["10.88.1.2/16"],"primary":true,"state":"running",
				"belongs_to_type":"zone","belongs_to_uuid":"v","owner_uuid":"o","network_uuid":"n","nic_tag":"external","vlan_id":0}`,
			want: zonegen.NIC{MAC: "90:b8:d0:00:00:01", IP: "10.88.1.2", IPs: []string{"10.88.1.2/16"}, NetworkUUID: "n", NICTag: "external"}},
		{name: "no network", body: `{"mac":"90:b8:d0:00:00:01","nic_tag":"admin","vlan_id":4}`,
			want: zonegen.NIC{MAC: "90:b8:d0:00:00:01", NICTag: "admin", VLANID: 4}},
		{name: "no mac", body: `{"ip":"10.0.0.1"}`, wantErr: true},
		{name: "vlan not a number", body: `{"mac":"m","vlan_id":"x"}`, wantErr: true},
		{name: "null", body: `null`, wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := decodeNIC([]byte(tt.body))
			if (err != nil) != tt.wantErr {
				t.Fatalf("err = %v, want error %v", err, tt.wantErr)
			}
			if got.MAC != tt.want.MAC || got.IP != tt.want.IP || !slices.Equal(got.IPs, tt.want.IPs) ||
				got.NetworkUUID != tt.want.NetworkUUID || got.NICTag != tt.want.NICTag || got.VLANID != tt.want.VLANID {
				t.Errorf("got %+v, want %+v", got, tt.want)
			}
		})
	}
}

func TestCanonicalMAC(t *testing.T) {
	tests := []struct {
		in, want string
		ok       bool
	}{
		{"90:b8:d0:00:00:01", "90:b8:d0:00:00:01", true},
		{"90B8D0000001", "90:b8:d0:00:00:01", true},
		{"90-B8-D0-00-00-01", "90:b8:d0:00:00:01", true},
		{"90:b8:d0:00:00", "", false},
		{"90:b8:d0:00:00:0g", "", false},
		{"", "", false},
		{"90:b8:d0:00:00:01/..", "", false},
	}
	for _, tt := range tests {
		if got, ok := canonicalMAC(tt.in); got != tt.want || ok != tt.ok {
			t.Errorf("canonicalMAC(%q) = %q, %v; want %q, %v", tt.in, got, ok, tt.want, tt.ok)
		}
	}
}

// FuzzDecodeNetwork checks that any NAPI network answer decodes without
// panicking and that an accepted one has its uuid and no pools.
func FuzzDecodeNetwork(f *testing.F) {
	for _, s := range []string{
		`{"uuid":"n","name":"external","vlan_id":0,"resolvers":[]}`,
		`{"uuid":"n","name":"My Fabric","fabric":true,"owner_uuids":["o1"]}`,
		`{"uuid":"n","owner_uuids":null}`, `{"name":5}`, `[]`, `null`, ``,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		n, err := decodeNetwork(body)
		if err != nil {
			return
		}
		if n.UUID == "" || n.Pools != nil {
			t.Fatalf("accepted %+v", n)
		}
	})
}

// FuzzDecodePools checks the pool listing decoder the same way.
func FuzzDecodePools(f *testing.F) {
	for _, s := range []string{
		`[{"uuid":"p1","name":"public","networks":["n1","n2"]}]`,
		`[{"uuid":"p3","networks":"n1"},{"name":"x"},42,null]`, `{}`, ``,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		pools, bad, err := decodePools(body)
		if err != nil && (pools != nil || bad != nil) {
			t.Fatalf("error %v with results", err)
		}
		for _, p := range pools {
			if p.UUID == "" {
				t.Fatalf("kept a pool without uuid: %+v", p)
			}
		}
	})
}

// FuzzDecodeNIC checks the NIC decoder, and that canonicalMAC of any MAC
// is stable.
func FuzzDecodeNIC(f *testing.F) {
	for _, s := range []string{
		`{"mac":"90:b8:d0:00:00:01","ip":"10.88.1.2","ips":["10.88.1.2/16"],"network_uuid":"n","vlan_id":0}`,
		`{"mac":"90B8D0000001"}`, `{"ip":"x"}`, `null`, ``,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		nic, err := decodeNIC(body)
		if err != nil {
			return
		}
		if nic.MAC == "" {
			t.Fatalf("accepted %+v", nic)
		}
		if c, ok := canonicalMAC(nic.MAC); ok {
			if again, ok := canonicalMAC(c); !ok || again != c {
				t.Fatalf("canonicalMAC(%q) = %q, not stable: %q, %v", nic.MAC, c, again, ok)
			}
		}
	})
}
