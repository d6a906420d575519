package xfr

import (
	"context"
	"reflect"
	"strings"
	"testing"

	"github.com/miekg/dns"

	"github.com/cnsd/cnsd/schema"
	"github.com/cnsd/cnsd/store"
)

// loopbackTransfers is the top-level setting that lets the tests, which
// transfer from loopback, do so: loopback is not allowed by default.
const loopbackTransfers = `, "allow_transfer": ["127.0.0.0/8"]`

// testConfig is the configuration the package's tests start from; extra
// is spliced in as further top-level keys.
func testConfig(t testing.TB, extra string) *schema.Config {
	t.Helper()
	doc := `{
  "my_name": "ns.example.test",
  "hostmaster": "hostmaster@example.test",
  "forward_zones": {
    "example.test": {"networks": ["*"], "peers": ["ns2.example.test"]},
    "sub.example.test": {"networks": ["a1b2c3d4-0000-4000-8000-000000000001"]},
    "empty.test": {"networks": ["a1b2c3d4-0000-4000-8000-000000000002"]}
  },
  "ttl": {"record": 30, "ns": 3600, "soa_minimum": 60}` + extra + `
}`
	cfg, err := schema.Parse([]byte(doc))
	if err != nil {
		t.Fatalf("test config: %v", err)
	}
	return cfg
}

// rec builds a stored record from zone-file-like fields.
func rec(name, typ, data string) store.Record {
	r := store.Record{Name: name, Data: data, Source: "test"}
	t, ok := dns.StringToType[typ]
	if !ok {
		panic("unknown type " + typ)
	}
	// The field's type belongs to a package xfr may not import.
	reflect.ValueOf(&r.Type).Elem().SetUint(uint64(t))
	return r
}

// testStore returns a memory store holding zones (zone → records, each
// "name TYPE data" with names relative to the zone, "@" for the apex).
func testStore(t testing.TB, zones map[string][]string) *store.Store {
	t.Helper()
	ctx := context.Background()
	st, err := store.Open(ctx, store.NewMemory(), store.Options{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	recs := map[string][]store.Record{}
	for zone, lines := range zones {
		for _, line := range lines {
			f := strings.SplitN(line, " ", 3)
			name := zone
			if f[0] != "@" {
				name = f[0] + "." + zone
			}
			recs[zone] = append(recs[zone], rec(name, f[1], f[2]))
		}
	}
	if _, err := st.CommitSource(ctx, "test", recs); err != nil {
		t.Fatal(err)
	}
	return st
}
