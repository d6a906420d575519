package mockcloud

import (
	"strings"
	"testing"
)

// TestRoutes checks status, error shape and the key fields of each CNAPI
// and NAPI route (VMAPI has its own tests).
func TestRoutes(t *testing.T) {
	c, srv := newTestCloud(t)
	f := c.Fixture()
	var mac, owner string
	for _, v := range f.VMs {
		if v.State == "running" && len(v.NICs) > 0 {
			mac, owner = v.NICs[0].MAC, v.OwnerUUID
			break
		}
	}
	setup := 0
	for _, s := range f.Servers {
		if s.Setup {
			setup++
		}
	}
	tests := []struct {
		name   string
		path   string
		status int
		check  func(t *testing.T, body any)
	}{
		{name: "servers setup=true with sysinfo", path: "/servers?setup=true&extras=status,sysinfo", status: 200,
			check: func(t *testing.T, body any) {
				list := body.([]any)
				if len(list) != setup {
					t.Errorf("%d servers, want %d", len(list), setup)
				}
				s := list[0].(map[string]any)
				for _, k := range []string{"uuid", "hostname", "status", "last_boot", "last_heartbeat", "setup", "sysinfo"} {
					if _, ok := s[k]; !ok {
						t.Errorf("server lacks %q: %v", k, s)
					}
				}
			}},
		{name: "servers without extras have no sysinfo", path: "/servers", status: 200,
			check: func(t *testing.T, body any) {
				if _, ok := body.([]any)[0].(map[string]any)["sysinfo"]; ok {
					t.Error("sysinfo sent without extras=sysinfo")
				}
			}},
		{name: "one server", path: "/servers/" + f.Servers[0].UUID, status: 200, check: hasField("hostname", f.Servers[0].Hostname)},
		{name: "unknown server", path: "/servers/00000000-0000-4000-8000-000000000000", status: 404, check: isError("ResourceNotFound")},
		{name: "server uuid not a UUID", path: "/servers/nope", status: 409, check: isError("InvalidArgument")},
		{name: "networks", path: "/networks", status: 200, check: hasLen(len(f.Networks))},
		{name: "networks by nic_tag and vlan_id", path: "/networks?nic_tag=admin&vlan_id=0", status: 200, check: hasLen(1)},
		{name: "one network", path: "/networks/" + f.Networks[netFabrics].UUID, status: 200,
			check: func(t *testing.T, body any) {
				n := body.(map[string]any)
				if n["name"] == "" || len(n["owner_uuids"].([]any)) != 1 || n["subnet"] == nil {
					t.Errorf("fabric network %v", n)
				}
			}},
		{name: "unknown network", path: "/networks/00000000-0000-4000-8000-000000000000", status: 404, check: isError("ResourceNotFound")},
		{name: "pools", path: "/network_pools", status: 200, check: hasLen(len(f.NetworkPools))},
		{name: "second page of pools", path: "/network_pools?limit=1&offset=1", status: 200, check: func(t *testing.T, body any) {
			if l := body.([]any); len(l) != 1 || l[0].(map[string]any)["uuid"] != f.NetworkPools[1].UUID {
				t.Errorf("page %v, want only pool %s", l, f.NetworkPools[1].UUID)
			}
		}},
		{name: "pools past the end", path: "/network_pools?offset=1000", status: 200, check: hasLen(0)},
		{name: "servers limit 0", path: "/servers?limit=0", status: 400, check: isError("InvalidParameters")},
		{name: "servers limit 1001", path: "/servers?limit=1001", status: 400, check: isError("InvalidParameters")},
		{name: "networks offset -1", path: "/networks?offset=-1", status: 422, check: isError("InvalidParameters")},
		{name: "servers page", path: "/servers?limit=2&offset=1", status: 200, check: hasLen(min(2, len(f.Servers)-1))},
		{name: "one pool", path: "/network_pools/" + f.NetworkPools[0].UUID, status: 200, check: hasField("name", "public")},
		{name: "unknown pool", path: "/network_pools/00000000-0000-4000-8000-000000000000", status: 404, check: isError("ResourceNotFound")},
		{name: "nic by mac", path: "/nics/" + mac, status: 200, check: hasField("owner_uuid", owner)},
		{name: "nic by mac without colons", path: "/nics/" + strings.ToUpper(strings.ReplaceAll(mac, ":", "")), status: 200,
			check: hasField("belongs_to_type", "zone")},
		{name: "unknown nic", path: "/nics/000000000000", status: 404, check: isError("ResourceNotFound")},
		{name: "changefeeds plain GET", path: "/changefeeds", status: 200,
			check: func(t *testing.T, body any) {
				vm := body.(map[string]any)["vm"].(map[string]any)
				if vm["bootstrapRoute"] != "/vms" {
					t.Errorf("changefeeds %v", body)
				}
			}},
		{name: "unknown route", path: "/nothing", status: 404, check: isError("ResourceNotFound")},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var body any
			getJSON(t, srv.URL+tt.path, tt.status, &body)
			tt.check(t, body)
		})
	}
}

func hasLen(n int) func(*testing.T, any) {
	return func(t *testing.T, body any) {
		if got := len(body.([]any)); got != n {
			t.Errorf("%d entries, want %d", got, n)
		}
	}
}

func hasField(k, v string) func(*testing.T, any) {
	return func(t *testing.T, body any) {
		if got := body.(map[string]any)[k]; got != v {
			t.Errorf("%s = %v, want %s", k, got, v)
		}
	}
}

func isError(code string) func(*testing.T, any) {
	return func(t *testing.T, body any) {
		e := body.(map[string]any)
		if e["code"] != code || e["message"] == "" {
			t.Errorf("error %v, want code %s and a message", e, code)
		}
	}
}
