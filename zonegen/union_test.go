package zonegen

import (
	"testing"
	"time"
)

func twinView(uuid, ip string) View {
	return View{
		VM: VM{UUID: uuid, OwnerUUID: "o1", Alias: "web0", State: "running",
			Tags: map[string]any{TagServices: "web:80"},
			NICs: []NIC{{IP: ip, NetworkUUID: "n1", MAC: "m-" + uuid}}},
		Owner:    &Account{UUID: "o1", Login: "alice", TritonCNSEnabled: "true", ApprovedForProvisioning: "true"},
		Networks: map[string]Network{"n1": {UUID: "n1", Name: "net"}},
	}
}

func TestUnionSharedNames(t *testing.T) {
	g := NewGenerator(Config{Zones: []ZoneConfig{{Name: "z.example", Networks: []string{"*"}}}, UseAlias: true, UseLogin: true})
	u := NewUnion()
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	gen := func(v View) Contribution {
		d := Decide(&v, DefaultDecideOptions(), now)
		return g.Generate(&v, &d)
	}
	a, b := twinView("vm-a", "10.0.0.1"), twinView("vm-b", "10.0.0.2")
	u.Put(gen(a))
	u.Put(gen(b))

	const shared = "web0.inst.alice.z.example."
	if got := u.Lookup("z.example", shared); len(got) != 4 {
		t.Fatalf("both VMs should own %s (A and TXT each), got %v", shared, got)
	}

	// vm-a changes address: only its records at the shared name change.
	a.VM.NICs[0].IP = "10.0.0.3"
	u.Put(gen(a))
	want := []Record{
		{Name: shared, Type: TypeA, Data: "10.0.0.2", Source: "vm-b"},
		{Name: shared, Type: TypeA, Data: "10.0.0.3", Source: "vm-a"},
		{Name: shared, Type: TypeTXT, Data: `"vm-a"`, Source: "vm-a"},
		{Name: shared, Type: TypeTXT, Data: `"vm-b"`, Source: "vm-b"},
	}
	if got := u.Lookup("z.example", shared); !equalRecords(got, want) {
		t.Fatalf("after vm-a moved: %v, want %v", got, want)
	}

	// Removing vm-a leaves every record of vm-b, including the service.
	u.Delete("vm-a")
	for _, r := range u.Records("z.example") {
		if r.Source != "vm-b" {
			t.Errorf("record of deleted vm-a remains: %v", r)
		}
	}
	cb, _ := u.Contribution("vm-b")
	if got, want := len(u.Records("z.example")), len(cb.Records("z.example")); got != want {
		t.Errorf("zone has %d records after deleting vm-a, want vm-b's %d", got, want)
	}
	if got := u.Lookup("z.example", "web.svc.alice.z.example."); len(got) != 3 {
		t.Errorf("service of vm-b should keep A, TXT, SRV: %v", got)
	}

	// An unresolved contribution keeps what vm-b published.
	u.Put(Contribution{VM: "vm-b", Unresolved: true})
	if len(u.Records("z.example")) == 0 {
		t.Error("unresolved contribution removed records")
	}
	u.Delete("vm-b")
	if zs := u.Zones(); len(zs) != 0 {
		t.Errorf("zones left after deleting every VM: %v", zs)
	}
}

func equalRecords(a, b []Record) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}
