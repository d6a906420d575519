package mockcloud

import (
	"context"
	"fmt"
	"math/rand/v2"
	"net/netip"
	"time"
)

// NewRand returns the random stream Churn uses for seed, for callers that
// drive ChurnStep themselves.
func NewRand(seed uint64) *rand.Rand { return rand.New(rand.NewPCG(seed, seed^0x5851f42d4c957f2d)) }

// Churn makes rate random changes per second, drawn from seed, until ctx
// is cancelled. Which changes are made depends only on seed and the
// starting state; when they happen depends on the clock.
func (c *Cloud) Churn(ctx context.Context, rate float64, seed uint64) error {
	if rate <= 0 {
		return fmt.Errorf("churn: rate %v: %w: must be positive", rate, ErrInvalid)
	}
	rng := NewRand(seed)
	t := time.NewTicker(time.Duration(float64(time.Second) / rate))
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-t.C:
			c.log.Debug("churn", "change", c.ChurnStep(rng))
		}
	}
}

// ChurnStep makes one random change drawn from rng and describes it.
func (c *Cloud) ChurnStep(rng *rand.Rand) string {
	vms := c.activeVMs()
	if len(vms) == 0 {
		return c.churnCreate(rng)
	}
	uuid := vms[rng.IntN(len(vms))]
	what, err := c.churnVM(rng, uuid)
	if err != nil {
		return fmt.Sprintf("vm %s: %s failed: %v", uuid, what, err)
	}
	return "vm " + uuid + ": " + what
}

// churnVM makes one random change, mostly to the VM uuid; the changes that
// concern something else describe themselves in full.
func (c *Cloud) churnVM(rng *rand.Rand, uuid string) (what string, err error) {
	switch r := rng.IntN(100); {
	case r < 25:
		state := "running"
		if v, _ := c.VM(uuid); v.State == "running" {
			state = "stopped"
		}
		what = "state " + state
		_, err = c.SetState(uuid, state)
	case r < 45:
		what, err = c.churnTags(rng, uuid)
	case r < 60:
		status := []string{"up", "down"}[rng.IntN(2)]
		what = "triton.cns.status " + status
		_, err = c.updateVM(uuid, func(v *VM) error {
			v.CustomerMetadata["triton.cns.status"] = status
			return nil
		})
	case r < 70:
		return c.churnCreate(rng), nil
	case r < 78:
		what = "destroy"
		_, err = c.DestroyVM(uuid)
	case r < 85:
		what, err = c.churnMove(rng, uuid)
	case r < 90:
		what = "alias"
		_, err = c.SetAlias(uuid, fmt.Sprintf("%s%d", roles[rng.IntN(len(roles))], rng.IntN(10000)))
	case r < 95:
		return c.churnServer(rng), nil
	default:
		return c.churnUser(rng), nil
	}
	return what, err
}

// activeVMs lists the uuids of the VMs not destroyed, sorted so that the
// draw depends on the seed only.
func (c *Cloud) activeVMs() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	var out []string
	for _, v := range c.vmsLocked() {
		if v.State != "destroyed" {
			out = append(out, v.UUID)
		}
	}
	return out
}

func (c *Cloud) churnTags(rng *rand.Rand, uuid string) (string, error) {
	v, _ := c.VM(uuid)
	tags := v.Tags
	what := "remove services"
	if _, ok := tags["triton.cns.services"]; ok && rng.IntN(2) == 0 {
		delete(tags, "triton.cns.services")
	} else {
		tags["triton.cns.services"] = services[rng.IntN(len(services))]
		what = fmt.Sprintf("services %v", tags["triton.cns.services"])
	}
	_, err := c.SetTags(uuid, tags)
	return what, err
}

func (c *Cloud) churnMove(rng *rand.Rand, uuid string) (string, error) {
	c.mu.Lock()
	if len(c.servers) == 0 {
		c.mu.Unlock()
		return "move", fmt.Errorf("%w: no servers", ErrInvalid)
	}
	s := c.servers[rng.IntN(len(c.servers))].UUID
	c.mu.Unlock()
	_, err := c.MoveVM(uuid, s)
	return "move to " + s, err
}

// churnCreate adds a VM of a random account on the network named
// "external" (if any), at a random address in its upper half.
func (c *Cloud) churnCreate(rng *rand.Rand) string {
	g := &gen{rng: rng}
	c.mu.Lock()
	if len(c.users) == 0 || len(c.servers) == 0 {
		c.mu.Unlock()
		return "no accounts or servers to create a VM for"
	}
	v := VM{UUID: g.uuid(), OwnerUUID: c.users[rng.IntN(len(c.users))].UUID,
		ServerUUID: c.servers[rng.IntN(len(c.servers))].UUID, Autoboot: true, RAM: 1024,
		Alias: fmt.Sprintf("%s%d", roles[rng.IntN(len(roles))], rng.IntN(10000))}
	for _, n := range c.networks {
		if n.Name != "external" || n.Family != "ipv4" {
			continue
		}
		p := netip.MustParsePrefix(n.Subnet)
		a := p.Addr().As4()
		host := rng.Uint32N(1<<(31-p.Bits())) + 1<<(31-p.Bits())
		u := (uint32(a[0])<<24 | uint32(a[1])<<16 | uint32(a[2])<<8 | uint32(a[3])) + host - 1
		ip := netip.AddrFrom4([4]byte{byte(u >> 24), byte(u >> 16), byte(u >> 8), byte(u)})
		v.NICs = []NIC{{Interface: "net0", MAC: fmt.Sprintf("90:b8:d1:%06x", rng.Uint32N(1<<24)),
			NICTag: n.NICTag, VLANID: n.VLANID, IP: ip.String(), IPs: []string{netip.PrefixFrom(ip, p.Bits()).String()},
			Netmask: n.Netmask, Gateway: n.Gateway, NetworkUUID: n.UUID, Primary: true, Model: "virtio", MTU: n.MTU}}
	}
	c.mu.Unlock()
	if rng.IntN(2) == 0 {
		v.Tags = map[string]any{"triton.cns.services": services[rng.IntN(len(services))]}
	}
	if _, err := c.CreateVM(v); err != nil {
		return "create failed: " + err.Error()
	}
	return "create vm " + v.UUID
}

func (c *Cloud) churnServer(rng *rand.Rand) string {
	c.mu.Lock()
	if len(c.servers) == 0 {
		c.mu.Unlock()
		return "no servers"
	}
	s := c.servers[rng.IntN(len(c.servers))]
	uuid, status := s.UUID, s.Status
	c.mu.Unlock()
	now := c.now()
	hb := timestamp(now)
	if status == "running" {
		status = "unknown"
		hb = timestamp(now.Add(-2 * time.Hour))
	} else {
		status = "running"
	}
	if _, err := c.UpdateServer(uuid, ServerPatch{Status: &status, LastHeartbeat: &hb}); err != nil {
		return "server " + uuid + ": " + err.Error()
	}
	return "server " + uuid + ": " + status
}

func (c *Cloud) churnUser(rng *rand.Rand) string {
	users := c.Users()
	if len(users) == 0 {
		return "no accounts"
	}
	u := users[rng.IntN(len(users))]
	flag := "true"
	if u.TritonCNSEnabled == "true" {
		flag = "false"
	}
	if _, err := c.UpdateUser(u.UUID, UserPatch{TritonCNSEnabled: &flag}); err != nil {
		return "user " + u.UUID + ": " + err.Error()
	}
	return "user " + u.Login + ": triton_cns_enabled " + flag
}
