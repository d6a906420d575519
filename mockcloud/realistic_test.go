package mockcloud

import (
	"bytes"
	"encoding/json"
	"log/slog"
	"os"
	"reflect"
	"strconv"
	"strings"
	"testing"
)

// realisticPath is a cloud written down from the services' public docs
// and sources: every field VMAPI, CNAPI, NAPI and UFDS send, several
// brands, odd-typed tags and metadata, and NAPI's own NIC table.
const realisticPath = "testdata/realistic.json"

// rawFixture reads a fixture file as plain JSON objects per kind.
func rawFixture(t *testing.T, b []byte) map[string][]map[string]any {
	t.Helper()
	var raw map[string][]map[string]any
	if err := json.Unmarshal(b, &raw); err != nil {
		t.Fatal(err)
	}
	return raw
}

// TestRealisticFixtureKept: every object of a dump of a real cloud comes
// back out of the cloud exactly as it went in, keys mockcloud does not
// model and values of every JSON type included.
func TestRealisticFixtureKept(t *testing.T) {
	b, err := os.ReadFile(realisticPath)
	if err != nil {
		t.Fatal(err)
	}
	if len(b) > 300<<10 {
		t.Errorf("%s is %d bytes; keep it under 300 KB", realisticPath, len(b))
	}
	f, err := DecodeFixture(bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	for _, kind := range []string{"vm", "vm_nic", "user", "server", "network", "network_pool", "nic"} {
		if f.ExtraKeys()[kind] == 0 {
			t.Errorf("no %s in %s has a key mockcloud does not model", kind, realisticPath)
		}
	}
	dump, err := json.Marshal(New(f, nil).Fixture())
	if err != nil {
		t.Fatal(err)
	}
	in, out := rawFixture(t, b), rawFixture(t, dump)
	for kind, objs := range in {
		byID := map[any]map[string]any{}
		for _, o := range out[kind] {
			byID[o["uuid"]] = o
			if kind == "nics" {
				byID[o["mac"]] = o
			}
		}
		if len(out[kind]) != len(objs) {
			t.Fatalf("%s: %d objects in, %d out", kind, len(objs), len(out[kind]))
		}
		for _, o := range objs {
			id := o["uuid"]
			if kind == "nics" {
				id = o["mac"]
			}
			if got := byID[id]; !reflect.DeepEqual(o, got) {
				t.Errorf("%s %v changed on its way through the cloud:\n in %v\nout %v", kind, id, o, got)
			}
		}
	}
}

// TestExtraKeysLogged: loading a fixture with keys mockcloud does not
// model says how many there are of each kind, in one line.
func TestExtraKeysLogged(t *testing.T) {
	f, err := LoadFixture(realisticPath)
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	New(f, &Options{Logger: slog.New(slog.NewTextHandler(&buf, nil))})
	lines := strings.Split(strings.TrimSpace(buf.String()), "\n")
	if len(lines) != 1 || !strings.Contains(lines[0], "extra keys per kind") {
		t.Fatalf("log:\n%s\nwant one line counting the extra keys", buf.String())
	}
	for kind, n := range f.ExtraKeys() {
		if !strings.Contains(lines[0], " "+kind+"="+strconv.Itoa(n)) {
			t.Errorf("log line %q lacks %s=%d", lines[0], kind, n)
		}
	}
	buf.Reset()
	New(Generate(GenOptions{VMs: 3, Accounts: 2, Servers: 1}), &Options{Logger: slog.New(slog.NewTextHandler(&buf, nil))})
	if buf.Len() != 0 {
		t.Errorf("a generated cloud has no extra keys, yet the log says:\n%s", buf.String())
	}
}

// realisticVM finds a VM of the realistic fixture by alias.
func realisticVM(t *testing.T, f *Fixture, alias string) VM {
	t.Helper()
	for _, v := range f.VMs {
		if v.Alias == alias {
			return v
		}
	}
	t.Fatalf("no VM %q in %s", alias, realisticPath)
	return VM{}
}

// TestRealisticServed: the APIs send the objects of a real cloud's dump
// as they came, NAPI's own NIC table answers GET /nics/:mac first, and a
// change keeps the keys the mock does not model.
func TestRealisticServed(t *testing.T) {
	b, err := os.ReadFile(realisticPath)
	if err != nil {
		t.Fatal(err)
	}
	in := rawFixture(t, b)
	f, err := DecodeFixture(bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	c, srv := serveFixture(t, f)
	var vms []map[string]any
	getJSON(t, srv.URL+"/vms?state=active", 200, &vms)
	byUUID := map[any]map[string]any{}
	for _, v := range vms {
		byUUID[v["uuid"]] = v
	}
	for _, v := range in["vms"] {
		if active := v["state"] != "destroyed" && v["state"] != "failed"; active && !reflect.DeepEqual(byUUID[v["uuid"]], v) {
			t.Errorf("GET /vms sent VM %s (%s) as\n%v\nwant\n%v", v["uuid"], v["alias"], byUUID[v["uuid"]], v)
		}
	}
	odd := realisticVM(t, f, "odd-ptr-num")
	var got map[string]any
	getJSON(t, srv.URL+"/vms/"+odd.UUID, 200, &got)
	md, _ := got["customer_metadata"].(map[string]any)
	tags, _ := got["tags"].(map[string]any)
	if md["replicas"] != 3.0 || md["debug"] != false || md["nothing"] != nil || tags["triton.cns.reverse_ptr"] != 42.0 {
		t.Errorf("GET /vms/%s: customer_metadata %v, tags %v: values not as they came", odd.UUID, md, tags)
	}
	for _, n := range in["nics"] {
		got = nil
		getJSON(t, srv.URL+"/nics/"+strings.ReplaceAll(n["mac"].(string), ":", ""), 200, &got)
		if !reflect.DeepEqual(got, n) {
			t.Errorf("GET /nics/%s = %v, want NAPI's record %v", n["mac"], got, n)
		}
	}
	var servers []map[string]any
	getJSON(t, srv.URL+"/servers?extras=sysinfo", 200, &servers)
	if len(servers) == 0 || servers[0]["traits"] == nil || servers[0]["boot_params"] == nil {
		t.Errorf("GET /servers lost CNAPI's fields: %v", servers)
	}
	bhyve := realisticVM(t, f, "db0")
	ws := subscribeV1(t, srv, "realistic", "tags")
	if _, err := c.SetTags(bhyve.UUID, map[string]any{"triton.cns.services": "db:5432"}); err != nil {
		t.Fatal(err)
	}
	items := readItems(t, c, ws)[0]
	if obj, _ := items[0].ResourceObject.(map[string]any); len(items) != 1 || obj["disks"] == nil ||
		!reflect.DeepEqual(items[0].ChangeKind.SubResources, []string{"last_modified", "tags"}) {
		t.Errorf("changefeed items %+v: want one tags item whose VM keeps its disks", items)
	}
	got = nil
	getJSON(t, srv.URL+"/vms/"+bhyve.UUID, 200, &got)
	if got["disks"] == nil || got["zfs_io_priority"] != 100.0 || got["tags"].(map[string]any)["triton.cns.services"] != "db:5432" {
		t.Errorf("after SetTags GET /vms/%s = %v: the change or the unmodelled keys are lost", bhyve.UUID, got)
	}
}

// TestNICFromNAPITable: NAPI's record of a NIC wins over the one derived
// from a VM, so a VM NIC without network_uuid can be repaired; a NIC only
// a VM lists is still derived from it.
func TestNICFromNAPITable(t *testing.T) {
	f, err := LoadFixture(realisticPath)
	if err != nil {
		t.Fatal(err)
	}
	_, srv := serveFixture(t, f)
	rep := realisticVM(t, f, "repaired0")
	if rep.NICs[0].NetworkUUID != "" {
		t.Fatalf("repaired0's NIC has network_uuid %s; the fixture must leave it out", rep.NICs[0].NetworkUUID)
	}
	var n NAPINIC
	getJSON(t, srv.URL+"/nics/"+rep.NICs[0].MAC, 200, &n)
	if n.NetworkUUID == "" || n.BelongsToUUID != rep.UUID || n.IP != rep.NICs[0].IP {
		t.Errorf("GET /nics/%s = %+v, want NAPI's record with network_uuid", rep.NICs[0].MAC, n)
	}
	nat := realisticVM(t, f, "nat-alice")
	getJSON(t, srv.URL+"/nics/"+nat.NICs[1].MAC, 200, &n)
	if n.BelongsToUUID != nat.UUID || n.NetworkUUID != nat.NICs[1].NetworkUUID || string(n.Extra["allow_ip_spoofing"]) != "true" {
		t.Errorf("GET /nics/%s = %+v, want it derived from VM %s with its extra keys", nat.NICs[1].MAC, n, nat.UUID)
	}
}

// TestServerExtras: CNAPI's listing sends agents, vms, memory_*, disk_*
// and sysinfo only when extras asks for them (status and last_heartbeat
// always); ServerGet and extras=all send the server whole.
func TestServerExtras(t *testing.T) {
	b, err := os.ReadFile(realisticPath)
	if err != nil {
		t.Fatal(err)
	}
	want := rawFixture(t, b)["servers"][0]
	f, err := DecodeFixture(bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	_, srv := serveFixture(t, f)
	uuid := want["uuid"].(string)
	first := func(query string) map[string]any {
		var servers []map[string]any
		getJSON(t, srv.URL+"/servers"+query, 200, &servers)
		for _, s := range servers {
			if s["uuid"] == uuid {
				return s
			}
		}
		t.Fatalf("GET /servers%s does not list %s", query, uuid)
		return nil
	}
	tests := []struct {
		query      string
		has, lacks []string
	}{
		{"", []string{"status", "last_heartbeat", "traits"}, []string{"sysinfo", "vms", "agents", "memory_total_bytes", "disk_pool_size_bytes"}},
		{"?extras=sysinfo", []string{"sysinfo", "status", "last_heartbeat"}, []string{"vms", "agents", "memory_total_bytes"}},
		{"?extras=vms,memory", []string{"vms", "memory_total_bytes", "status"}, []string{"sysinfo", "agents", "disk_pool_size_bytes"}},
		{"?extras=disk,agents", []string{"agents", "disk_pool_size_bytes"}, []string{"sysinfo", "vms", "memory_arc_bytes"}},
	}
	for _, tt := range tests {
		got := first(tt.query)
		for _, k := range tt.has {
			if _, ok := got[k]; !ok {
				t.Errorf("GET /servers%s: no %q", tt.query, k)
			}
		}
		for _, k := range tt.lacks {
			if _, ok := got[k]; ok {
				t.Errorf("GET /servers%s sends %q, which CNAPI sends only when asked", tt.query, k)
			}
		}
	}
	if got := first("?extras=all"); !reflect.DeepEqual(got, want) {
		t.Errorf("GET /servers?extras=all = %v, want the server whole %v", got, want)
	}
	var got map[string]any
	getJSON(t, srv.URL+"/servers/"+uuid, 200, &got)
	if !reflect.DeepEqual(got, want) {
		t.Errorf("GET /servers/%s = %v, want the server whole %v", uuid, got, want)
	}
}
