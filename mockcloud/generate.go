package mockcloud

import (
	"fmt"
	"math/rand/v2"
	"net/netip"
	"time"
)

// GenOptions sizes a generated cloud. Now is the clock the timestamps are
// derived from; zero means 2026-01-01T00:00:00Z, so that the same options
// always give the same fixture.
type GenOptions struct {
	VMs, Accounts, Servers int
	Seed                   uint64
	Now                    time.Time
}

// gen holds the state of one Generate run.
type gen struct {
	rng  *rand.Rand
	now  time.Time
	f    *Fixture
	next map[string]netip.Addr // network uuid → next free address
	macs uint32                // MACs handed out
}

// Generate builds a realistic cloud deterministically from o: an admin
// account (login "admin") and a "poseidon" one among the accounts, a mix of
// CNS-enabled and disabled accounts, an admin network, external IPv4 and
// IPv6 networks each in a pool, an internal network, one fabric network per
// account, and VMs with aliases, services tags (with ports, priorities and
// SRV-style labels), stopped, provisioning and destroyed ones, and one
// compute node that is down.
func Generate(o GenOptions) *Fixture {
	g := &gen{rng: rand.New(rand.NewPCG(o.Seed, o.Seed^0x9e3779b97f4a7c15)),
		now: o.Now, f: &Fixture{}, next: map[string]netip.Addr{}}
	if g.now.IsZero() {
		g.now = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	}
	g.users(max(o.Accounts, 1))
	g.servers(max(o.Servers, 1))
	g.networks()
	for i := range o.VMs {
		g.vm(i)
	}
	return g.f
}

// uuid draws a random (version 4 form) UUID from the generator's stream.
func (g *gen) uuid() string {
	a, b := g.rng.Uint64(), g.rng.Uint64()
	a = a&^0xf000 | 0x4000
	b = b&^(0xc<<60) | 0x8<<60
	return fmt.Sprintf("%08x-%04x-%04x-%04x-%012x", a>>32, a>>16&0xffff, a&0xffff, b>>48, b&0xffffffffffff)
}

func (g *gen) users(n int) {
	for i := range n {
		u := User{UUID: g.uuid(), Login: fmt.Sprintf("user%03d", i),
			TritonCNSEnabled: "true", ApprovedForProvisioning: "true"}
		switch {
		case i == 0:
			u.Login = "admin"
		case i == 1:
			u.Login = "poseidon"
			u.TritonCNSEnabled = ""
		case i%7 == 3:
			u.TritonCNSEnabled = "false"
		case i%11 == 5:
			u.TritonCNSEnabled = ""
		case i%13 == 6:
			u.ApprovedForProvisioning = "false"
		}
		u.Email = u.Login + "@example.com"
		g.f.Users = append(g.f.Users, u)
	}
}

func (g *gen) servers(n int) {
	for i := range n {
		s := Server{UUID: g.uuid(), Hostname: fmt.Sprintf("cn%02d", i), Datacenter: "dc1",
			Status: "running", Setup: true, RAM: 262144, CurrentPlatform: "20260101T000000Z",
			BootPlatform: "20260101T000000Z", Created: timestamp(g.now.AddDate(-1, 0, 0)),
			LastBoot:      timestamp(g.now.Add(-time.Duration(10+i) * 24 * time.Hour)),
			LastHeartbeat: timestamp(g.now.Add(-time.Duration(g.rng.IntN(5000)) * time.Millisecond)),
			Sysinfo:       map[string]any{"Admin NIC Tag": "admin", "Hostname": ""}}
		s.Sysinfo["Hostname"] = s.Hostname
		s.Sysinfo["UUID"] = s.UUID
		if i == 0 {
			s.Hostname, s.Headnode = "headnode", true
			s.Sysinfo["Hostname"] = s.Hostname
		}
		if n >= 3 && i == n-1 {
			// A compute node that stopped heartbeating two hours ago.
			s.Status = "unknown"
			s.LastHeartbeat = timestamp(g.now.Add(-2 * time.Hour))
		}
		g.f.Servers = append(g.f.Servers, s)
	}
}
