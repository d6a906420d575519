package mockcloud

import "fmt"

// ServerPatch changes some fields of a compute node; nil fields stay.
// Timestamps are ISO 8601 strings as CNAPI sends them; "" removes one.
type ServerPatch struct {
	Status        *string `json:"status,omitempty"`
	Setup         *bool   `json:"setup,omitempty"`
	LastBoot      *string `json:"last_boot,omitempty"`
	LastHeartbeat *string `json:"last_heartbeat,omitempty"`
	Hostname      *string `json:"hostname,omitempty"`
}

// UpdateServer changes a compute node. CNAPI has no changefeed: clients see
// the change on their next GET /servers.
func (c *Cloud) UpdateServer(uuid string, p ServerPatch) (Server, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, s := range c.servers {
		if s.UUID != uuid {
			continue
		}
		set(&s.Status, p.Status)
		set(&s.Setup, p.Setup)
		set(&s.LastBoot, p.LastBoot)
		set(&s.LastHeartbeat, p.LastHeartbeat)
		set(&s.Hostname, p.Hostname)
		return serverView(s, everyExtra), nil
	}
	return Server{}, fmt.Errorf("update server %s: %w", uuid, ErrNotFound)
}

// set stores *p in *dst when p is not nil.
func set[T any](dst *T, p *T) {
	if p != nil {
		*dst = *p
	}
}
