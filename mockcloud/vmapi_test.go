package mockcloud

import (
	"net/url"
	"slices"
	"strconv"
	"testing"
)

func TestListVMsPagination(t *testing.T) {
	c, srv := newTestCloud(t)
	want := activeUUIDs(c.Fixture())
	if len(want) < 20 {
		t.Fatalf("fixture has only %d active VMs", len(want))
	}
	tests := []struct {
		name   string
		marker bool
		sort   string
		desc   bool
	}{
		{name: "marker, default sort is uuid descending", marker: true, desc: true},
		{name: "marker, sort=uuid.asc", marker: true, sort: "uuid.asc"},
		{name: "offset", desc: true},
		{name: "offset, sort=uuid.ASC", sort: "uuid.ASC"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var seen []string
			for page := 0; ; page++ {
				q := url.Values{"state": {"active"}, "limit": {"7"}}
				if tt.sort != "" {
					q.Set("sort", tt.sort)
				}
				if tt.marker && len(seen) > 0 {
					q.Set("marker", `{"uuid":"`+seen[len(seen)-1]+`"}`)
				} else if !tt.marker {
					q.Set("offset", strconv.Itoa(len(seen)))
				}
				var vms []VM
				resp := getJSON(t, srv.URL+"/vms?"+q.Encode(), 200, &vms)
				if got := resp.Header.Get("x-joyent-resource-count"); got != strconv.Itoa(len(want)) {
					t.Errorf("x-joyent-resource-count = %q, want %d", got, len(want))
				}
				if len(vms) == 0 {
					break
				}
				if len(vms) > 7 {
					t.Fatalf("page %d has %d VMs, limit 7", page, len(vms))
				}
				for _, v := range vms {
					seen = append(seen, v.UUID)
				}
			}
			sorted := slices.IsSorted(seen)
			if tt.desc {
				r := slices.Clone(seen)
				slices.Reverse(r)
				sorted = slices.IsSorted(r)
			}
			if !sorted {
				t.Errorf("order is not by uuid (desc=%v): %v", tt.desc, seen)
			}
			got := map[string]bool{}
			for _, u := range seen {
				if got[u] {
					t.Errorf("VM %s listed twice", u)
				}
				got[u] = true
				if !want[u] {
					t.Errorf("VM %s listed but not active", u)
				}
			}
			if len(got) != len(want) {
				t.Errorf("listed %d VMs, want %d", len(got), len(want))
			}
		})
	}
}

func TestListVMsQueries(t *testing.T) {
	c, srv := newTestCloud(t)
	f := c.Fixture()
	count := func(pred func(VM) bool) int {
		n := 0
		for _, v := range f.VMs {
			if pred(v) {
				n++
			}
		}
		return n
	}
	first := f.VMs[0]
	tests := []struct {
		name   string
		query  string
		status int
		want   int    // VMs in the answer, when status is 200
		code   string // error code otherwise
	}{
		{name: "everything, destroyed included", query: "", status: 200, want: len(f.VMs)},
		{name: "state=active", query: "state=active", status: 200, want: len(activeUUIDs(f))},
		{name: "state=stopped", query: "state=stopped", status: 200,
			want: count(func(v VM) bool { return v.State == "stopped" })},
		{name: "state=destroyed", query: "state=destroyed", status: 200,
			want: count(func(v VM) bool { return v.State == "destroyed" })},
		{name: "owner_uuid", query: "owner_uuid=" + first.OwnerUUID, status: 200,
			want: count(func(v VM) bool { return v.OwnerUUID == first.OwnerUUID })},
		{name: "server_uuid and state", query: "state=active&server_uuid=" + first.ServerUUID, status: 200,
			want: count(func(v VM) bool {
				return v.ServerUUID == first.ServerUUID && v.State != "destroyed" && v.State != "failed"
			})},
		{name: "uuids", query: "uuids=" + first.UUID + "," + f.VMs[1].UUID, status: 200, want: 2},
		{name: "fields of VMAPI's list", query: "fields=uuid,state,tags,customer_metadata&limit=3", status: 200, want: 3},
		{name: "fields star", query: "fields=*&limit=2", status: 200, want: 2},
		{name: "fields nics", query: "fields=uuid,nics", status: 409, code: "ValidationFailed"},
		{name: "fields destroyed", query: "fields=uuid,destroyed", status: 409, code: "ValidationFailed"},
		{name: "triton-cns marker probe", query: `limit=1&state=active&marker={"uuid":"000000"}`, status: 200, want: 0},
		{name: "limit 0", query: "limit=0", status: 409, code: "ValidationFailed"},
		{name: "limit above 1000", query: "limit=1001", status: 409, code: "ValidationFailed"},
		{name: "marker not JSON", query: "marker=abc", status: 409, code: "ValidationFailed"},
		{name: "marker without uuid", query: `marker={"alias":"x"}`, status: 409, code: "ValidationFailed"},
		{name: "offset with marker", query: `offset=2&marker={"uuid":"x"}`, status: 409, code: "ValidationFailed"},
		{name: "unknown parameter", query: "colour=blue", status: 409, code: "ValidationFailed"},
		{name: "sort by alias", query: "sort=alias.asc&limit=4", status: 200, want: 4},
		{name: "sort key outside VMAPI's list", query: "sort=colour", status: 409, code: "ValidationFailed"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			q, err := url.ParseQuery(tt.query)
			if err != nil {
				t.Fatal(err)
			}
			u := srv.URL + "/vms?" + q.Encode()
			if tt.status != 200 {
				var e apiError
				getJSON(t, u, tt.status, &e)
				if e.Code != tt.code || e.Message == "" || len(e.Errors) == 0 {
					t.Errorf("error = %+v, want code %s with errors", e, tt.code)
				}
				return
			}
			var vms []map[string]any
			getJSON(t, u, 200, &vms)
			if len(vms) != tt.want {
				t.Errorf("got %d VMs, want %d", len(vms), tt.want)
			}
		})
	}
}

// TestVMShape checks the fields docs/pipeline.md lists as read are present under their
// VMAPI names, and the collections VMAPI never leaves out.
func TestVMShape(t *testing.T) {
	c, srv := newTestCloud(t)
	f := c.Fixture()
	var withNIC VM
	for _, v := range f.VMs {
		if len(v.NICs) > 0 && v.State == "running" {
			withNIC = v
			break
		}
	}
	var vm map[string]any
	getJSON(t, srv.URL+"/vms/"+withNIC.UUID, 200, &vm)
	for _, k := range []string{"uuid", "owner_uuid", "alias", "state", "server_uuid", "tags",
		"customer_metadata", "nics", "zone_state", "last_modified", "create_timestamp", "brand"} {
		if _, ok := vm[k]; !ok {
			t.Errorf("GET /vms/:uuid lacks %q", k)
		}
	}
	primaries := 0
	for _, n := range vm["nics"].([]any) {
		nic := n.(map[string]any)
		for _, k := range []string{"ip", "ips", "mac", "network_uuid", "nic_tag", "vlan_id", "interface"} {
			if _, ok := nic[k]; !ok {
				t.Errorf("nic lacks %q: %v", k, nic)
			}
		}
		if nic["primary"] == true {
			primaries++
		}
	}
	if primaries != 1 {
		t.Errorf("%d primary NICs, want 1: %v", primaries, vm["nics"])
	}
	var e apiError
	getJSON(t, srv.URL+"/vms/00000000-0000-0000-0000-000000000000", 404, &e)
	if e.Code != "ResourceNotFound" || e.Message == "" {
		t.Errorf("unknown VM: error %+v", e)
	}
	// A destroyed VM is still found, with its destroyed timestamp.
	for _, v := range f.VMs {
		if v.State == "destroyed" {
			getJSON(t, srv.URL+"/vms/"+v.UUID, 200, &vm)
			if vm["destroyed"] == nil || vm["state"] != "destroyed" {
				t.Errorf("destroyed VM: %v", vm)
			}
			break
		}
	}
}

// TestVMFieldsRendered checks that fields limits what is sent as VMAPI's
// renderVms does: ListVms sends just the names asked, and GetVm, which does
// not check its fields, also renders nics and destroyed.
func TestVMFieldsRendered(t *testing.T) {
	c, srv := newTestCloud(t)
	var page []map[string]any
	getJSON(t, srv.URL+"/vms?limit=5&fields=uuid,state", 200, &page)
	for _, vm := range page {
		if len(vm) != 2 || vm["uuid"] == nil || vm["state"] == nil {
			t.Errorf("ListVms fields=uuid,state sent %v", vm)
		}
	}
	first := c.Fixture().VMs[0]
	var one map[string]any
	getJSON(t, srv.URL+"/vms/"+first.UUID+"?fields=uuid,nics,no_such_field", 200, &one)
	if len(one) != 2 || one["uuid"] != first.UUID || one["nics"] == nil {
		t.Errorf("GetVm fields=uuid,nics,no_such_field sent %v", one)
	}
}
