package pipeline

import (
	"context"
	"fmt"
	"log/slog"
	"testing"
	"time"

	"github.com/cnsd/cnsd/zonegen"
)

// BenchmarkStageDecide is what staging a listing page does per VM once
// its owners and networks are in the memo: resolve the view and decide
// (resolver.decide), then generate the records. ns/op is per VM, over
// 1,000 VMs of 100 owners, each with an admin NIC and one or two others
// on 200 networks.
//
//	go test ./pipeline -run '^$' -bench StageDecide -benchmem
func BenchmarkStageDecide(b *testing.B) {
	memo := newLookups()
	r := &resolver{owners: &downOwners{}, servers: noServers{}, networks: noNetworks{}, timeout: time.Minute,
		log: slog.New(slog.DiscardHandler)}
	gen := zonegen.NewGenerator(zonegen.Config{UseAlias: true, UseLogin: true, Zones: []zonegen.ZoneConfig{
		{Name: "pub.example.com", Networks: []string{"00000000-0000-4000-8000-000000000000"}},
		{Name: "dc1.cns.example.com", Networks: []string{"*"}},
	}})
	vms := make([]zonegen.VM, 1000)
	for i := range vms {
		owner := fmt.Sprintf("a0000000-0000-4000-8000-%012d", i%100)
		r.recordOwner(memo, owner, zonegen.Account{UUID: owner, Login: fmt.Sprint("user", i%100),
			TritonCNSEnabled: "true", ApprovedForProvisioning: "true"}, nil)
		nics := []zonegen.NIC{{IP: fmt.Sprintf("10.66.%d.%d", i/250, i%250+2), MAC: "m0", NICTag: "admin", NetworkUUID: "adm"}}
		for j := range 1 + i%2 {
			net := fmt.Sprintf("00000000-0000-4000-8000-%012d", (i+j*7)%200)
			r.recordNetwork(memo, net, zonegen.Network{UUID: net, Name: fmt.Sprint("net", (i+j*7)%200), OwnerUUIDs: []string{owner}}, nil)
			nics = append(nics, zonegen.NIC{IPs: []string{fmt.Sprintf("10.%d.%d.%d/16", j+1, i/250, i%250+2)}, MAC: fmt.Sprint("m", j+1),
				NICTag: "external", NetworkUUID: net})
		}
		vms[i] = zonegen.VM{UUID: fmt.Sprintf("c0000000-0000-4000-8000-%012d", i), OwnerUUID: owner, Alias: fmt.Sprint("vm-", i),
			State: "running", NICs: nics, Tags: map[string]any{}, CustomerMetadata: map[string]string{}}
		if i%3 == 0 {
			vms[i].Tags[zonegen.TagServices] = "web:80,web:443:priority=5"
		}
	}
	now := time.Date(2026, 11, 1, 12, 0, 0, 0, time.UTC)
	opts := zonegen.DefaultDecideOptions()
	ctx := context.Background()
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		o := r.decide(ctx, vms[i%len(vms)], opts, now, memo, nil)
		if o.Decision.Unresolved {
			b.Fatal(o.Decision.Reasons)
		}
		generate(gen, &o)
	}
}
