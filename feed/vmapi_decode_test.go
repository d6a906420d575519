package feed

import (
	"encoding/json"
	"errors"
	"reflect"
	"slices"
	"testing"
	"time"

	"github.com/cnsd/cnsd/zonegen"
)

func TestDecodeVM(t *testing.T) {
	const id = "c43ae904-2f2c-4f3c-9a0e-6bfb2f9a1d05"
	tests := []struct {
		name    string
		in      string
		want    zonegen.VM
		wantErr bool
	}{
		{name: "full", in: `{"uuid":"` + id + `","owner_uuid":"o","alias":"web0","state":"running",
			"server_uuid":"s","tags":{"triton.cns.services":"web:80","n":1},
			"customer_metadata":{"triton.cns.status":"up"},"brand":"joyent",
			"nics":[{"interface":"net0","mac":"90:b8:d0:00:00:01","vlan_id":0,"nic_tag":"external",
			"ip":"10.88.1.2","ips":["10.88.1.2/16"],"network_uuid":"n1","primary":true}]}`,
			want: zonegen.VM{UUID: id, OwnerUUID: "o", Alias: "web0", State: "running", ServerUUID: "s",
				Tags:             map[string]any{"triton.cns.services": "web:80", "n": 1.0},
				CustomerMetadata: map[string]string{"triton.cns.status": "up"},
				NICs: []zonegen.NIC{{IP: "10.88.1.2", IPs: []string{"10.88.1.2/16"}, MAC: "90:b8:d0:00:00:01",
					NetworkUUID: "n1", NICTag: "external"}}}},
		{name: "nulls are absent", in: `{"uuid":"u","alias":null,"tags":null,"customer_metadata":null,"nics":null,"destroyed":null}`,
			want: zonegen.VM{UUID: "u"}},
		{name: "destroyed timestamp", in: `{"uuid":"u","state":"destroyed","destroyed":"2026-01-01T00:00:00.000Z"}`,
			want: zonegen.VM{UUID: "u", State: "destroyed", Destroyed: true}},
		{name: "metadata values that are not strings keep their json", in: `{"uuid":"u","customer_metadata":{"a":1,"b":true,"c":{"x": 1},"d":null,"e":[1.50]}}`,
			want: zonegen.VM{UUID: "u", CustomerMetadata: map[string]string{"a": "1", "b": "true", "c": `{"x":1}`, "d": "", "e": "[1.50]"}}},
		{name: "tags keep their json values", in: `{"uuid":"u","tags":{"a":1,"b":false,"c":null,"d":{"x":[1]},"e":"s"}}`,
			want: zonegen.VM{UUID: "u", Tags: map[string]any{"a": 1.0, "b": false, "c": nil, "d": map[string]any{"x": []any{1.0}}, "e": "s"}}},
		{name: "metadata json text is valid utf-8 with exact numbers", in: "{\"uuid\":\"u\",\"customer_metadata\":{\"a\":{\"\xf4\":[12345678901234567890, \"<b>\"]}}}",
			want: zonegen.VM{UUID: "u", CustomerMetadata: map[string]string{"a": "{\"\ufffd\":[12345678901234567890,\"<b>\"]}"}}},
		{name: "lenient nic fields", in: `{"uuid":"u","nics":[{"ip":5,"ips":"10.0.0.1/24","vlan_id":"12","mac":["x"]},{}]}`,
			want: zonegen.VM{UUID: "u", NICs: []zonegen.NIC{{IPs: []string{"10.0.0.1/24"}, VLANID: 12}, {}}}},
		{name: "ips with non-strings", in: `{"uuid":"u","nics":[{"ips":["10.0.0.1/24",7,null],"vlan_id":true}]}`,
			want: zonegen.VM{UUID: "u", NICs: []zonegen.NIC{{IPs: []string{"10.0.0.1/24"}}}}},
		{name: "empty and null ips", in: `{"uuid":"u","nics":[{"ip":"10.0.0.1","ips":null},{"ips":""},{"ips":["",null]}]}`,
			want: zonegen.VM{UUID: "u", NICs: []zonegen.NIC{{IP: "10.0.0.1"}, {}, {}}}},
		{name: "no uuid", in: `{"alias":"x"}`, wantErr: true},
		{name: "uuid not a string", in: `{"uuid":7}`, wantErr: true},
		{name: "not an object", in: `[1,2]`, wantErr: true},
		{name: "null", in: `null`, wantErr: true},
		{name: "truncated", in: `{"uuid":"u",`, wantErr: true},
		{name: "alias not a string", in: `{"uuid":"u","alias":{}}`, wantErr: true},
		{name: "tags not an object", in: `{"uuid":"u","tags":"web"}`, wantErr: true},
		{name: "metadata not an object", in: `{"uuid":"u","customer_metadata":[]}`, wantErr: true},
		{name: "nics not an array", in: `{"uuid":"u","nics":{}}`, wantErr: true},
		{name: "nic not an object", in: `{"uuid":"u","nics":["net0"]}`, wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := decodeVM([]byte(tt.in))
			if (err != nil) != tt.wantErr {
				t.Fatalf("decodeVM error = %v, want error %v", err, tt.wantErr)
			}
			if err == nil && !reflect.DeepEqual(got, tt.want) {
				t.Errorf("decodeVM =\n%+v\nwant\n%+v", got, tt.want)
			}
		})
	}
}

func TestDecodeVMNoUUID(t *testing.T) {
	if _, err := decodeVM([]byte(`{"uuid":""}`)); !errors.Is(err, errVMNoUUID) {
		t.Errorf("decodeVM of an empty uuid: %v, want errVMNoUUID", err)
	}
}

func TestVMUUID(t *testing.T) {
	for in, want := range map[string]string{
		`{"uuid":"u","tags":"x"}`: "u",
		`{"uuid":3}`:              "",
		`[]`:                      "",
		`{"uuid":"u"`:             "",
	} {
		if got := vmUUID([]byte(in)); got != want {
			t.Errorf("vmUUID(%s) = %q, want %q", in, got, want)
		}
	}
}

// FuzzDecodeVM: no input panics; whatever decodes has a uuid, no empty
// address, and survives a round trip through zonegen.VM's own JSON.
func FuzzDecodeVM(f *testing.F) {
	for _, s := range []string{
		`{"uuid":"u","owner_uuid":"o","alias":"a","state":"running","tags":{"a":1},"customer_metadata":{"k":"v"},"nics":[{"ip":"10.0.0.1","ips":["10.0.0.1/24"],"vlan_id":3}]}`,
		`{"uuid":"u","destroyed":"2026","nics":[{"ips":"x","vlan_id":"7"}]}`,
		`{"uuid":null}`, `[]`, `null`, `{"uuid":"u","customer_metadata":{"a":{"b":[1]}}}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		vm, err := decodeVM(b)
		if err == nil && vm.UUID == "" {
			t.Errorf("decodeVM(%q) succeeded without a uuid", b)
		}
		if err != nil {
			return
		}
		if vmUUID(b) != vm.UUID {
			t.Errorf("vmUUID(%q) = %q, decodeVM says %q", b, vmUUID(b), vm.UUID)
		}
		for _, n := range vm.NICs {
			if slices.Contains(n.IPs, "") {
				t.Errorf("decodeVM(%q): empty address in %q", b, n.IPs)
			}
		}
		again, err := json.Marshal(vm)
		if err != nil {
			t.Fatalf("marshal %+v: %v", vm, err)
		}
		vm2, err := decodeVM(again)
		if err != nil {
			t.Fatalf("decodeVM(%s) of its own output: %v", again, err)
		}
		if !reflect.DeepEqual(emptyToNil(vm), emptyToNil(vm2)) {
			t.Errorf("round trip of %q:\n%+v\n%+v", b, vm, vm2)
		}
	})
}

// emptyToNil makes the empty collections that omitempty drops nil.
func emptyToNil(vm zonegen.VM) zonegen.VM {
	if len(vm.Tags) == 0 {
		vm.Tags = nil
	}
	if len(vm.CustomerMetadata) == 0 {
		vm.CustomerMetadata = nil
	}
	if len(vm.NICs) == 0 {
		vm.NICs = nil
	}
	for i := range vm.NICs {
		if len(vm.NICs[i].IPs) == 0 {
			vm.NICs[i].IPs = nil
		}
	}
	return vm
}

// TestOddTypesAsTritonCNS: tags and metadata of any JSON type, decoded and
// decided, do what Triton CNS (lib/flag-filter.js) did with them: status
// is up only as the string "up"; disable is off only as false (and, on
// purpose, "false": docs/differences.md); services only as a string, and
// a services tag that is present but not a string hides the docker label.
// No value stops the VM from being decoded.
func TestOddTypesAsTritonCNS(t *testing.T) {
	tests := []struct {
		name, tags, md   string
		instance, listed bool // instance names; listed in service web
	}{
		{"status up", `{"triton.cns.services":"web"}`, `{"triton.cns.status":"up"}`, true, true},
		{"status absent", `{"triton.cns.services":"web"}`, `{}`, true, true},
		{"status true", `{"triton.cns.services":"web"}`, `{"triton.cns.status":true}`, true, false},
		{"status 1", `{"triton.cns.services":"web"}`, `{"triton.cns.status":1}`, true, false},
		{"status null", `{"triton.cns.services":"web"}`, `{"triton.cns.status":null}`, true, false},
		{"status object", `{"triton.cns.services":"web"}`, `{"triton.cns.status":{"up":true}}`, true, false},
		{"status UP", `{"triton.cns.services":"web"}`, `{"triton.cns.status":"UP"}`, true, false},
		{"disable true", `{"triton.cns.services":"web","triton.cns.disable":true}`, `{}`, false, false},
		{`disable "true"`, `{"triton.cns.services":"web","triton.cns.disable":"true"}`, `{}`, false, false},
		{"disable 0", `{"triton.cns.services":"web","triton.cns.disable":0}`, `{}`, false, false},
		{"disable null", `{"triton.cns.services":"web","triton.cns.disable":null}`, `{}`, false, false},
		{"disable false", `{"triton.cns.services":"web","triton.cns.disable":false}`, `{}`, true, true},
		{`docker label disable "false"`, `{"triton.cns.services":"web","docker:label:triton.cns.disable":"false"}`, `{}`, true, true},
		{"services a number", `{"triton.cns.services":80}`, `{}`, true, false},
		{"services null hides the label", `{"triton.cns.services":null,"docker:label:triton.cns.services":"web"}`, `{}`, true, false},
		{"services from the label", `{"docker:label:triton.cns.services":"web"}`, `{}`, true, true},
		{"odd unrelated values", `{"triton.cns.services":"web","x":{"y":[1,null]},"z":2.5}`, `{"a":[1],"b":false}`, true, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			vm, err := decodeVM([]byte(`{"uuid":"u","owner_uuid":"o","state":"running","tags":` + tt.tags +
				`,"customer_metadata":` + tt.md + `,"nics":[{"ip":"192.0.2.1","network_uuid":"n"}]}`))
			if err != nil {
				t.Fatal(err)
			}
			v := zonegen.View{VM: vm, Owner: &zonegen.Account{UUID: "o", Login: "alice", TritonCNSEnabled: "true", ApprovedForProvisioning: "true"},
				Networks: map[string]zonegen.Network{"n": {UUID: "n", Name: "external"}}}
			d := zonegen.Decide(&v, zonegen.DefaultDecideOptions(), time.Now())
			listed := slices.ContainsFunc(d.Services, func(s zonegen.ServiceListing) bool { return s.Name == "web" && s.Listed })
			if d.Instance != tt.instance || listed != tt.listed {
				t.Errorf("instance %v, listed in web %v; want %v, %v (reasons %v)", d.Instance, listed, tt.instance, tt.listed, d.Reasons)
			}
		})
	}
}
