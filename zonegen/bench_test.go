package zonegen

import (
	"fmt"
	"math/rand/v2"
	"runtime"
	"testing"
	"time"
)

// benchViews generates n VM views shaped like a public cloud: most VMs
// have a public and a fabric NIC, a third are in a service with a port,
// some report themselves down, a few are stopped or owned by disabled
// accounts.
func benchViews(n int) ([]View, Config) {
	r := rand.New(rand.NewPCG(1, 2))
	cfg := Config{Zones: []ZoneConfig{
		{Name: "dc1.cns.example.com", Networks: []string{"*"}},
		{Name: "pub.example.com", Networks: []string{"public-net"}},
	}, UseAlias: true, UseLogin: true}
	server := &Server{UUID: "cn1", Status: "running", Setup: true,
		LastBoot: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC), LastHeartbeat: time.Date(2026, 11, 1, 11, 59, 0, 0, time.UTC)}
	accounts := make([]*Account, 1000)
	for i := range accounts {
		enabled := FlagString("true")
		if i%20 == 0 {
			enabled = "false"
		}
		accounts[i] = &Account{UUID: fmt.Sprintf("a0000000-0000-4000-8000-%012d", i), Login: fmt.Sprintf("user%d", i),
			TritonCNSEnabled: enabled, ApprovedForProvisioning: "true"}
	}
	views := make([]View, n)
	for i := range views {
		acct := accounts[r.IntN(len(accounts))]
		fabric := "fabric-" + acct.Login
		v := View{
			VM: VM{UUID: fmt.Sprintf("c0000000-0000-4000-8000-%012d", i), OwnerUUID: acct.UUID,
				Alias: fmt.Sprintf("vm-%d", i), State: "running", ServerUUID: server.UUID,
				Tags: map[string]any{}, CustomerMetadata: map[string]string{},
				NICs: []NIC{
					{IP: fmt.Sprintf("198.51.%d.%d", i>>8&0xff, i&0xff), NetworkUUID: "public-net", MAC: "m1", NICTag: "external"},
					{IPs: []string{fmt.Sprintf("10.%d.%d.%d/16", i>>16&0xff, i>>8&0xff, i&0xff)}, NetworkUUID: fabric, MAC: "m2", NICTag: "sdc_overlay"},
				}},
			Owner:  acct,
			Server: server,
			Networks: map[string]Network{
				"public-net": {UUID: "public-net", Name: "External"},
				fabric:       {UUID: fabric, Name: "My Fabric", OwnerUUIDs: []string{acct.UUID}},
			},
		}
		switch r.IntN(12) {
		case 0, 1, 2, 3:
			v.VM.Tags[TagServices] = "web:80,web:443:priority=5"
		case 4:
			v.VM.Tags[TagServices] = "db"
			v.VM.CustomerMetadata[MetaStatus] = "down"
		case 5:
			v.VM.State = "stopped"
		}
		views[i] = v
	}
	return views, cfg
}

// BenchmarkGenerate100k runs Decide and Generate over 100k views per
// iteration and reports views per second and allocations per view.
func BenchmarkGenerate100k(b *testing.B) {
	const n = 100_000
	views, cfg := benchViews(n)
	g := NewGenerator(cfg)
	now := time.Date(2026, 11, 1, 12, 0, 0, 0, time.UTC)
	opts := DefaultDecideOptions()
	records := 0
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	b.ResetTimer()
	for b.Loop() {
		records = 0
		for i := range views {
			d := Decide(&views[i], opts, now)
			c := g.Generate(&views[i], &d)
			for _, z := range c.Zones {
				records += len(z.Records)
			}
		}
	}
	b.StopTimer()
	runtime.ReadMemStats(&after)
	total := float64(b.N) * n
	b.ReportMetric(total/b.Elapsed().Seconds(), "views/s")
	b.ReportMetric(float64(after.Mallocs-before.Mallocs)/total, "allocs/view")
	b.ReportMetric(float64(records)/n, "records/view")
}

// BenchmarkParseServices measures the tag parser on a typical tag.
func BenchmarkParseServices(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		if _, err := ParseServices("web:80,web:443:priority=5:weight=20,api"); err != nil {
			b.Fatal(err)
		}
	}
}
