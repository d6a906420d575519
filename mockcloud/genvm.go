package mockcloud

import (
	"fmt"
	"time"
)

var (
	roles = []string{"web", "api", "db", "cache", "worker", "lb", "queue", "search"}
	// services are triton.cns.services values of the forms in use: bare
	// names, ports, several services, SRV-style labels, priority and weight.
	services = []string{"web:80", "web:80,web:443", "api:8080:priority=10:weight=5",
		"_http._tcp:80", "db:5432", "cache", "queue:5672,queue-admin:15672", "search:9200:weight=20"}
)

// vm generates the i-th VM.
func (g *gen) vm(i int) {
	users, servers := g.f.Users, g.f.Servers
	ownerIdx := g.rng.IntN(len(users))
	if i%10 == 0 {
		ownerIdx = 0 // the admin account runs a share of the VMs
	}
	owner := users[ownerIdx]
	role := roles[g.rng.IntN(len(roles))]
	created := g.now.Add(-time.Duration(g.rng.IntN(90*24)) * time.Hour)
	v := VM{UUID: g.uuid(), Autoboot: true, Brand: "joyent", BillingID: g.uuid(),
		CreateTimestamp: timestamp(created), LastModified: timestamp(created),
		CustomerMetadata: map[string]any{}, ImageUUID: g.uuid(), InternalMetadata: map[string]any{},
		MaxPhysicalMemory: 1024, OwnerUUID: owner.UUID, Quota: 25, RAM: 1024,
		ServerUUID: servers[g.rng.IntN(len(servers))].UUID, State: "running",
		Tags: map[string]any{}, ZoneState: "running"}
	if g.rng.IntN(10) > 0 {
		v.Alias = fmt.Sprintf("%s%d", role, i)
	}
	g.vmNICs(&v, ownerIdx)
	g.vmTags(&v, role, ownerIdx == 0)
	g.vmState(&v)
	g.f.VMs = append(g.f.VMs, v)
}

func (g *gen) vmNICs(v *VM, ownerIdx int) {
	var nets []int
	switch r := g.rng.IntN(10); {
	case ownerIdx == 0:
		nets = []int{netAdmin, netExternal}
	case r < 4:
		nets = []int{netExternal}
		if r == 0 {
			nets = append(nets, netExternal6)
		}
	case r < 5:
		nets = []int{netExternal, netInternal}
	default:
		nets = []int{netFabrics + ownerIdx}
	}
	for k, n := range nets {
		v.NICs = append(v.NICs, g.nic(n, k))
	}
	if ownerIdx == 0 {
		// An admin VM's primary NIC is its external one.
		v.NICs[0].Primary, v.NICs[1].Primary = false, true
	}
}

func (g *gen) vmTags(v *VM, role string, admin bool) {
	if admin {
		v.Tags["smartdc_role"] = role
		v.Tags["smartdc_type"] = "core"
	}
	switch r := g.rng.IntN(100); {
	case r < 35:
		v.Tags["triton.cns.services"] = services[g.rng.IntN(len(services))]
	case r < 40:
		v.Tags["docker:label:triton.cns.services"] = services[g.rng.IntN(len(services))]
	case r < 42:
		v.Tags["triton.cns.services"] = "Bad Service!:99999" // malformed: must not stop cnsd
	}
	switch r := g.rng.IntN(100); {
	case r < 2:
		v.Tags["triton.cns.disable"] = true
	case r < 4:
		v.Tags["triton.cns.disable"] = "false"
	case r < 8 && v.Alias != "":
		v.Tags["triton.cns.reverse_ptr"] = v.Alias + ".example.com"
	}
	switch r := g.rng.IntN(100); {
	case r < 8:
		v.CustomerMetadata["triton.cns.status"] = "down"
	case r < 16:
		v.CustomerMetadata["triton.cns.status"] = "up"
	case r < 19:
		v.CustomerMetadata["triton.cns.acme-challenge"] = "token-" + v.UUID[:8] + " token2-" + v.UUID[9:13]
	}
}

func (g *gen) vmState(v *VM) {
	switch r := g.rng.IntN(100); {
	case r < 12:
		v.State = "stopped"
	case r < 14:
		v.State = "provisioning"
	case r < 17:
		v.State = "destroyed"
		v.Destroyed = v.LastModified
	case r < 18:
		v.State = "failed"
	}
	v.ZoneState = zoneState(v.State)
}
