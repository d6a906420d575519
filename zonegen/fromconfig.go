package zonegen

import "github.com/cnsd/cnsd/schema"

// ConfigFrom takes the naming settings from a validated configuration:
// the forward zones in file order, use_alias and use_login.
func ConfigFrom(c *schema.Config) Config {
	out := Config{UseAlias: c.UseAlias, UseLogin: c.UseLogin}
	for _, z := range c.ForwardZones {
		out.Zones = append(out.Zones, ZoneConfig{Name: z.Name, Networks: append([]string(nil), z.Networks...)})
	}
	return out
}

// DecideOptionsFrom takes the decision settings from a validated
// configuration: require_status_up and the compute-node limits.
func DecideOptionsFrom(c *schema.Config) DecideOptions {
	return DecideOptions{
		RequireStatusUp: c.RequireStatusUp,
		HeartbeatLimit:  c.ComputeNodes.HeartbeatLimit,
		BootGrace:       c.ComputeNodes.BootGrace,
	}
}
