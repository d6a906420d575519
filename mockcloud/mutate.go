package mockcloud

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"time"
)

// Sentinel errors of the mutation API, compared with errors.Is.
var (
	// ErrNotFound: the VM, server or user named does not exist.
	ErrNotFound = errors.New("not found")
	// ErrInvalid: the change is not one the cloud could make.
	ErrInvalid = errors.New("invalid change")
)

// updateVM applies change to a copy of the VM, stores it and publishes the
// changefeed item VMAPI would: subResources are the top-level fields whose
// JSON differs, and resourceObject is the new VM. Publishing under c.mu
// keeps the items in the order of the changes.
func (c *Cloud) updateVM(uuid string, change func(*VM) error) (VM, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	v, ok := c.vms[uuid]
	if !ok {
		return VM{}, fmt.Errorf("update vm %s: %w", uuid, ErrNotFound)
	}
	next := cloneVM(*v)
	if err := change(&next); err != nil {
		return VM{}, fmt.Errorf("update vm %s: %w", uuid, err)
	}
	now := c.now()
	next.LastModified = timestamp(now)
	c.publishLocked(*v, next, now)
	*v = next
	return cloneVM(next), nil
}

func (c *Cloud) publishLocked(old, next VM, now time.Time) {
	c.vmGen++
	ob, _ := old.MarshalJSON() // decoded JSON values and strings: cannot fail
	nb, _ := next.MarshalJSON()
	kind := ChangeKind{Resource: VMResource.Resource, SubResources: changedFields(ob, nb)}
	c.feed.publish(kind, next.UUID, json.RawMessage(nb), now)
}

// changedFields lists, sorted, the top-level JSON fields that differ
// between the VMs encoded as a and b, as VMAPI's diff of the old and new
// VM does.
func changedFields(a, b []byte) []string {
	var ma, mb map[string]json.RawMessage
	json.Unmarshal(a, &ma)
	json.Unmarshal(b, &mb)
	var out []string
	for k, vb := range mb {
		if va, ok := ma[k]; !ok || !bytes.Equal(va, vb) {
			out = append(out, k)
		}
	}
	for k := range ma {
		if _, ok := mb[k]; !ok {
			out = append(out, k)
		}
	}
	slices.Sort(out)
	return out
}

// CreateVM adds a VM (state "running" unless given) and publishes it.
func (c *Cloud) CreateVM(v VM) (VM, error) {
	if v.UUID == "" || v.OwnerUUID == "" {
		return VM{}, fmt.Errorf("create vm: %w: uuid and owner_uuid are required", ErrInvalid)
	}
	v = cloneVM(v)
	v.Extra = maps.Clone(v.Extra) // the caller's map; kept unchanged from here on
	if err := v.Extra.check(); err != nil {
		return VM{}, fmt.Errorf("create vm %s: %w: %w", v.UUID, ErrInvalid, err)
	}
	normalizeVM(&v)
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, dup := c.vms[v.UUID]; dup {
		return VM{}, fmt.Errorf("create vm %s: %w: it exists", v.UUID, ErrInvalid)
	}
	now := c.now()
	if v.CreateTimestamp == "" {
		v.CreateTimestamp = timestamp(now)
	}
	v.LastModified = timestamp(now)
	if v.ZoneState == "" {
		v.ZoneState = zoneState(v.State)
	}
	c.publishLocked(VM{}, v, now)
	c.vms[v.UUID] = &v
	return cloneVM(v), nil
}

// zoneState is the zone_state VMAPI shows beside a state.
func zoneState(state string) string {
	switch state {
	case "stopped":
		return "installed"
	case "provisioning":
		return "ready"
	}
	return state
}

// DestroyVM marks a VM destroyed; VMAPI keeps destroyed VMs, so GET
// /vms/:uuid still finds it while GET /vms?state=active no longer lists it.
func (c *Cloud) DestroyVM(uuid string) (VM, error) {
	return c.updateVM(uuid, func(v *VM) error {
		if v.State == "destroyed" {
			return fmt.Errorf("%w: already destroyed", ErrInvalid)
		}
		v.State, v.ZoneState, v.Destroyed = "destroyed", "destroyed", timestamp(c.now())
		return nil
	})
}

// SetState changes a VM's state (running, stopped, provisioning, failed...).
func (c *Cloud) SetState(uuid, state string) (VM, error) {
	return c.updateVM(uuid, func(v *VM) error {
		if state == "" || state == "destroyed" {
			return fmt.Errorf("%w: state %q (use DestroyVM to destroy)", ErrInvalid, state)
		}
		v.State, v.ZoneState = state, zoneState(state)
		return nil
	})
}

// SetTags replaces a VM's tags.
func (c *Cloud) SetTags(uuid string, tags map[string]any) (VM, error) {
	return c.updateVM(uuid, func(v *VM) error {
		v.Tags = cloneMap(tags)
		return nil
	})
}

// SetCustomerMetadata replaces a VM's customer_metadata. Values may be of
// any JSON type: VMAPI accepts strings, numbers and booleans, and older
// clouds hold the rest.
func (c *Cloud) SetCustomerMetadata(uuid string, md map[string]any) (VM, error) {
	return c.updateVM(uuid, func(v *VM) error {
		v.CustomerMetadata = cloneMap(md)
		return nil
	})
}

// SetAlias renames a VM.
func (c *Cloud) SetAlias(uuid, alias string) (VM, error) {
	return c.updateVM(uuid, func(v *VM) error {
		v.Alias = alias
		return nil
	})
}

// MoveVM moves a VM to another compute node (a migration).
func (c *Cloud) MoveVM(uuid, serverUUID string) (VM, error) {
	return c.updateVM(uuid, func(v *VM) error {
		if serverUUID == "" {
			return fmt.Errorf("%w: empty server_uuid", ErrInvalid)
		}
		v.ServerUUID = serverUUID
		return nil
	})
}

// SetNICs replaces a VM's NICs.
func (c *Cloud) SetNICs(uuid string, nics []NIC) (VM, error) {
	return c.updateVM(uuid, func(v *VM) error {
		v.NICs = cloneVM(VM{NICs: nics}).NICs
		if v.NICs == nil {
			v.NICs = []NIC{}
		}
		return nil
	})
}

// cloneMap copies m, giving an empty map for nil: VMAPI never sends null
// for tags or metadata.
func cloneMap[V any](m map[string]V) map[string]V {
	out := make(map[string]V, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}
