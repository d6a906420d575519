package feed

import (
	"context"
	"encoding/json"
	"log/slog"
	"os"
	"testing"
	"time"

	"github.com/cnsd/cnsd/logtest"
	"github.com/cnsd/cnsd/mockcloud"
	"github.com/cnsd/cnsd/mockcloud/ufdstest"
	"github.com/cnsd/cnsd/schema"
)

// realistic is a cloud in the shapes the real services send, every field
// included (docs/mockcloud.md).
const realistic = "../mockcloud/testdata/realistic.json"

// realisticArrays reads the fixture's arrays as the raw objects an API
// would send.
func realisticArrays(t testing.TB) map[string][]json.RawMessage {
	t.Helper()
	b, err := os.ReadFile(realistic)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string][]json.RawMessage
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	return m
}

// TestDecodeRealShapes: cnsd's decoders read whole objects of VMAPI,
// CNAPI and NAPI, with every field the services send, without refusing
// one.
func TestDecodeRealShapes(t *testing.T) {
	m := realisticArrays(t)
	for _, raw := range m["vms"] {
		if vm, err := decodeVM(raw); err != nil || vm.OwnerUUID == "" || vm.State == "" {
			t.Errorf("decodeVM %.80s…: %+v, %v", raw, vm, err)
		}
	}
	all := func(list []json.RawMessage) []byte {
		b, _ := json.Marshal(list)
		return b
	}
	servers, bad, err := decodeServers(all(m["servers"]))
	if err != nil || len(bad) != 0 || len(servers) != len(m["servers"]) {
		t.Fatalf("decodeServers: %d servers, bad %v, err %v", len(servers), bad, err)
	}
	for _, s := range servers {
		if s.Hostname == "" || s.Status == "" || s.LastHeartbeat.IsZero() {
			t.Errorf("server %+v: fields lost", s)
		}
	}
	pools, bad, err := decodePools(all(m["network_pools"]))
	if err != nil || len(bad) != 0 || len(pools) != len(m["network_pools"]) || len(pools[0].Networks) == 0 {
		t.Fatalf("decodePools: %+v, bad %v, err %v", pools, bad, err)
	}
	for _, raw := range m["networks"] {
		if n, err := decodeNetwork(raw); err != nil || n.Name == "" {
			t.Errorf("decodeNetwork %.80s…: %+v, %v", raw, n, err)
		}
	}
	for _, raw := range m["nics"] {
		if n, err := decodeNIC(raw); err != nil || n.NetworkUUID == "" || n.IP == "" {
			t.Errorf("decodeNIC %s: %+v, %v", raw, n, err)
		}
	}
}

// TestUFDSRealAccounts: accounts with every attribute UFDS keeps (cn
// with two values, pwdchangedtime, created_at, …) are read, and their
// flags are the ones they hold.
func TestUFDSRealAccounts(t *testing.T) {
	f, err := mockcloud.LoadFixture(realistic)
	if err != nil {
		t.Fatal(err)
	}
	c := mockcloud.New(f, nil)
	s := ufdstest.Start(t, c)
	u := NewUFDS(schema.UFDSConfig{Endpoint: schema.Endpoint{URL: s.URL}, BindDN: ufdstest.RootDN,
		BindPassword: ufdstest.Password, CacheTime: time.Hour}, slog.New(slog.NewTextHandler(&logtest.Buffer{}, nil)))
	defer u.Close()
	for _, want := range c.Users() {
		if len(want.Extra) == 0 {
			t.Errorf("account %s has no other attribute; the fixture is meant to carry them", want.Login)
		}
		got, err := u.User(context.Background(), want.UUID)
		if err != nil || got.Login != want.Login || string(got.TritonCNSEnabled) != want.TritonCNSEnabled ||
			string(got.ApprovedForProvisioning) != want.ApprovedForProvisioning {
			t.Errorf("User(%s) = %+v, %v; want login %s, flags %q %q", want.UUID, got, err,
				want.Login, want.TritonCNSEnabled, want.ApprovedForProvisioning)
		}
	}
}
