package mockcloud

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"strings"
	"testing"
)

func TestLoadFixtureExample(t *testing.T) {
	f, err := LoadFixture("testdata/example.json")
	if err != nil {
		t.Fatal(err)
	}
	if len(f.VMs) != 2 || len(f.Users) != 2 || len(f.Servers) != 1 || len(f.Networks) != 3 || len(f.NetworkPools) != 1 {
		t.Fatalf("loaded %d VMs, %d users, %d servers, %d networks, %d pools",
			len(f.VMs), len(f.Users), len(f.Servers), len(f.Networks), len(f.NetworkPools))
	}
	// A fixture may leave out what VMAPI always sends; the cloud fills it in.
	c := New(f, nil)
	db, _ := c.VM("d2b5c6a7-8e9f-4a0b-9c1d-2e3f4a5b6c06")
	if db.CustomerMetadata == nil || db.InternalMetadata == nil || db.Brand != "joyent" {
		t.Errorf("VM not normalised: %+v", db)
	}
	// The current state dumped as a fixture loads back to the same cloud.
	b, err := json.Marshal(c.Fixture())
	if err != nil {
		t.Fatal(err)
	}
	g, err := DecodeFixture(bytes.NewReader(b))
	if err != nil {
		t.Fatalf("decode the dump: %v", err)
	}
	b2, _ := json.Marshal(New(g, nil).Fixture())
	if !bytes.Equal(b, b2) {
		t.Errorf("dump does not round-trip:\n%s\n%s", b, b2)
	}
}

func TestDecodeFixtureErrors(t *testing.T) {
	tests := []struct {
		name, json, want string
		fixture          bool // the error wraps ErrFixture
	}{
		{name: "misspelt top-level key", json: `{"vm":[]}`, want: `json: unknown field "vm"`},
		{name: "wrong type", json: `{"vms":[{"uuid":1}]}`, want: "cannot unmarshal number"},
		{name: "wrong type of a nic field", json: `{"vms":[{"uuid":"v","nics":[{"mac":"m","vlan_id":"0"}]}]}`,
			want: "vm v: nic m: json: cannot unmarshal string"},
		{name: "nic without mac", json: `{"nics":[{"ip":"10.0.0.1"}]}`, want: "a nic has no mac", fixture: true},
		{name: "duplicate nic", json: `{"nics":[{"mac":"90:b8:d0:00:00:01"},{"mac":"90B8D0000001"}]}`,
			want: "nic 90b8d0000001 appears twice", fixture: true},
		{name: "vm without uuid", json: `{"vms":[{"alias":"x"}]}`, want: "a vm has no uuid", fixture: true},
		{name: "duplicate server", json: `{"servers":[{"uuid":"s"},{"uuid":"s"}]}`,
			want: "server s appears twice", fixture: true},
		{name: "trailing data", json: `{} {}`, want: "data after the top-level object", fixture: true},
		{name: "not JSON", json: `vms: []`, want: "invalid character"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := DecodeFixture(strings.NewReader(tt.json))
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("error %v, want it to contain %q", err, tt.want)
			}
			if errors.Is(err, ErrFixture) != tt.fixture {
				t.Errorf("errors.Is(%v, ErrFixture) = %v", err, !tt.fixture)
			}
		})
	}
	if _, err := LoadFixture("testdata/missing.json"); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("missing file: %v", err)
	}
}

// FuzzDecodeFixture: any input either fails cleanly or gives a fixture a
// cloud can be built from and serve as JSON.
func FuzzDecodeFixture(f *testing.F) {
	b, err := os.ReadFile("testdata/example.json")
	if err != nil {
		f.Fatal(err)
	}
	f.Add(b)
	f.Add([]byte(`{"vms":[{"uuid":"a","nics":[{"ips":["x"]}]}]}`))
	f.Add([]byte(`{"users":[{"uuid":"u","login":"l"}],"servers":[{"uuid":"s","sysinfo":{"a":[1]}}]}`))
	f.Add([]byte(`{"vms":[{"uuid":"a","zpool":"zones","nics":[{"mac":"m","x":[null]}]}],"nics":[{"mac":"n","y":{}}]}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		fx, err := DecodeFixture(bytes.NewReader(data))
		if err != nil {
			return
		}
		if _, err := json.Marshal(New(fx, nil).Fixture()); err != nil {
			t.Fatalf("a decoded fixture does not encode: %v", err)
		}
	})
}
