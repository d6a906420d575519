package mockcloud

import (
	"testing"
)

// TestAdminAPI drives every admin route and checks the cloud changed.
func TestAdminAPI(t *testing.T) {
	c, srv := newTestCloud(t)
	f := c.Fixture()
	vm := f.VMs[0]
	user := f.Users[2]
	server := f.Servers[1]
	tests := []struct {
		name, method, path, body string
		status                   int
		check                    func(t *testing.T)
	}{
		{name: "create vm", method: "POST", path: "/_mock/vms", status: 201,
			body: `{"uuid":"11111111-2222-4333-8444-555555555555","owner_uuid":"` + user.UUID + `","alias":"made"}`,
			check: func(t *testing.T) {
				if v, ok := c.VM("11111111-2222-4333-8444-555555555555"); !ok || v.Alias != "made" || v.State != "running" {
					t.Errorf("created VM %+v", v)
				}
			}},
		{name: "create vm twice", method: "POST", path: "/_mock/vms", status: 409,
			body: `{"uuid":"11111111-2222-4333-8444-555555555555","owner_uuid":"` + user.UUID + `"}`},
		{name: "create vm without owner", method: "POST", path: "/_mock/vms", status: 409, body: `{"uuid":"x"}`},
		{name: "create vm with keys the mock does not model", method: "POST", path: "/_mock/vms", status: 201,
			body: `{"uuid":"11111111-2222-4333-8444-666666666666","owner_uuid":"` + user.UUID + `","zpool":"zones","cpu_cap":350}`,
			check: func(t *testing.T) {
				if v, _ := c.VM("11111111-2222-4333-8444-666666666666"); string(v.Extra["zpool"]) != `"zones"` || string(v.Extra["cpu_cap"]) != "350" {
					t.Errorf("created VM keeps %v, want zpool and cpu_cap", v.Extra)
				}
			}},
		{name: "tags", method: "PUT", path: "/_mock/vms/" + vm.UUID + "/tags", status: 200,
			body: `{"triton.cns.services":"web:80","triton.cns.disable":false}`,
			check: func(t *testing.T) {
				if v, _ := c.VM(vm.UUID); v.Tags["triton.cns.services"] != "web:80" || v.Tags["triton.cns.disable"] != false {
					t.Errorf("tags %v", v.Tags)
				}
			}},
		{name: "customer_metadata", method: "PUT", path: "/_mock/vms/" + vm.UUID + "/customer_metadata", status: 200,
			body: `{"triton.cns.status":"down"}`,
			check: func(t *testing.T) {
				if v, _ := c.VM(vm.UUID); v.CustomerMetadata["triton.cns.status"] != "down" {
					t.Errorf("customer_metadata %v", v.CustomerMetadata)
				}
			}},
		{name: "state", method: "PUT", path: "/_mock/vms/" + vm.UUID + "/state", status: 200, body: `{"state":"stopped"}`,
			check: func(t *testing.T) {
				if v, _ := c.VM(vm.UUID); v.State != "stopped" || v.ZoneState != "installed" {
					t.Errorf("state %s/%s", v.State, v.ZoneState)
				}
			}},
		{name: "state destroyed refused", method: "PUT", path: "/_mock/vms/" + vm.UUID + "/state", status: 409, body: `{"state":"destroyed"}`},
		{name: "alias", method: "PUT", path: "/_mock/vms/" + vm.UUID + "/alias", status: 200, body: `{"alias":"web9"}`},
		{name: "server_uuid", method: "PUT", path: "/_mock/vms/" + vm.UUID + "/server_uuid", status: 200,
			body: `{"server_uuid":"` + server.UUID + `"}`,
			check: func(t *testing.T) {
				if v, _ := c.VM(vm.UUID); v.ServerUUID != server.UUID {
					t.Errorf("server_uuid %s", v.ServerUUID)
				}
			}},
		{name: "nics", method: "PUT", path: "/_mock/vms/" + vm.UUID + "/nics", status: 200,
			body: `[{"interface":"net0","mac":"90:b8:d0:ff:ff:ff","nic_tag":"external","ip":"10.88.9.9","primary":true}]`},
		{name: "unknown vm", method: "PUT", path: "/_mock/vms/nope/tags", status: 404, body: `{}`},
		{name: "destroy", method: "DELETE", path: "/_mock/vms/" + vm.UUID, status: 200,
			check: func(t *testing.T) {
				if v, _ := c.VM(vm.UUID); v.State != "destroyed" || v.Destroyed == "" {
					t.Errorf("destroyed VM %+v", v)
				}
			}},
		{name: "destroy twice", method: "DELETE", path: "/_mock/vms/" + vm.UUID, status: 409},
		{name: "server down", method: "PATCH", path: "/_mock/servers/" + server.UUID, status: 200,
			body: `{"status":"unknown","last_heartbeat":"2026-03-01T10:00:00.000Z"}`,
			check: func(t *testing.T) {
				var s Server
				getJSON(t, srv.URL+"/servers/"+server.UUID, 200, &s)
				if s.Status != "unknown" || s.LastHeartbeat != "2026-03-01T10:00:00.000Z" || !s.Setup {
					t.Errorf("server %+v", s)
				}
			}},
		{name: "unknown server", method: "PATCH", path: "/_mock/servers/nope", status: 404, body: `{}`},
		{name: "user flags", method: "PATCH", path: "/_mock/users/" + user.UUID, status: 200,
			body: `{"triton_cns_enabled":"false","login":"renamed"}`,
			check: func(t *testing.T) {
				var ch []UserChange
				getJSON(t, srv.URL+"/_mock/users/changes?after=0", 200, &ch)
				last := ch[len(ch)-1]
				if last.Type != "modify" || last.User.Login != "renamed" || last.User.TritonCNSEnabled != "false" {
					t.Errorf("changelog %+v", ch)
				}
			}},
		{name: "add user", method: "POST", path: "/_mock/users", status: 201,
			body: `{"uuid":"99999999-2222-4333-8444-555555555555","login":"bob"}`,
			check: func(t *testing.T) {
				var ch []UserChange
				getJSON(t, srv.URL+"/_mock/users/changes?after=1", 200, &ch)
				if len(ch) != 1 || ch[0].ChangeNumber != 2 || ch[0].Type != "add" {
					t.Errorf("changes after 1: %+v", ch)
				}
			}},
		{name: "users", method: "GET", path: "/_mock/users", status: 200},
		{name: "changes bad after", method: "GET", path: "/_mock/users/changes?after=x", status: 409},
		{name: "fixture dump", method: "GET", path: "/_mock/fixture", status: 200},
		{name: "changefeed stats", method: "GET", path: "/_mock/changefeed/stats", status: 200},
		{name: "cut", method: "POST", path: "/_mock/changefeed/cut", status: 200},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			doJSON(t, tt.method, srv.URL+tt.path, tt.body, tt.status, nil)
			if tt.check != nil {
				tt.check(t)
			}
		})
	}
}
