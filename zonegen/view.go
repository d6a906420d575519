package zonegen

import (
	"bytes"
	"encoding/json"
	"time"
)

// View is everything the decisions and the record generator need to know
// about one VM: the VM as VMAPI shows it, its owner from UFDS, its compute
// node from CNAPI and the NAPI networks of its NICs. Owner or Server being
// nil means the lookup has not succeeded (yet).
type View struct {
	VM       VM                 `json:"vm"`
	Owner    *Account           `json:"owner,omitempty"`
	Server   *Server            `json:"server,omitempty"`
	Networks map[string]Network `json:"networks,omitempty"`
}

// VM is the part of a VMAPI VM object that naming depends on.
type VM struct {
	UUID             string            `json:"uuid"`
	OwnerUUID        string            `json:"owner_uuid"`
	Alias            string            `json:"alias,omitempty"`
	State            string            `json:"state"`
	Destroyed        Truthy            `json:"destroyed,omitempty"`
	ServerUUID       string            `json:"server_uuid,omitempty"`
	Tags             map[string]any    `json:"tags,omitempty"`
	CustomerMetadata map[string]string `json:"customer_metadata,omitempty"`
	NICs             []NIC             `json:"nics,omitempty"`
}

// NIC is one VMAPI network interface. IPs (with optional /prefix) is the
// newer field; IP is used when IPs is empty.
type NIC struct {
	IP          string   `json:"ip,omitempty"`
	IPs         []string `json:"ips,omitempty"`
	MAC         string   `json:"mac,omitempty"`
	NetworkUUID string   `json:"network_uuid,omitempty"`
	NICTag      string   `json:"nic_tag,omitempty"`
	VLANID      int      `json:"vlan_id,omitempty"`
}

// Account is a UFDS user. UFDS stores its flags as strings ("true",
// "false"); a missing flag is the empty string.
type Account struct {
	UUID                    string     `json:"uuid"`
	Login                   string     `json:"login"`
	TritonCNSEnabled        FlagString `json:"triton_cns_enabled,omitempty"`
	ApprovedForProvisioning FlagString `json:"approved_for_provisioning,omitempty"`
}

// Server is a CNAPI compute node.
type Server struct {
	UUID          string    `json:"uuid"`
	Hostname      string    `json:"hostname,omitempty"`
	Status        string    `json:"status,omitempty"`
	Setup         bool      `json:"setup"`
	LastBoot      time.Time `json:"last_boot,omitzero"`
	LastHeartbeat time.Time `json:"last_heartbeat,omitzero"`
}

// Network is a NAPI network, with the UUIDs of the network pools that
// contain it.
type Network struct {
	UUID       string   `json:"uuid"`
	Name       string   `json:"name"`
	OwnerUUIDs []string `json:"owner_uuids,omitempty"`
	Pools      []string `json:"pools,omitempty"`
}

// Truthy decodes any JSON value by JavaScript truthiness, the way VMAPI
// consumers read fields such as "destroyed" (a timestamp or absent).
type Truthy bool

// UnmarshalJSON implements json.Unmarshaler.
func (t *Truthy) UnmarshalJSON(b []byte) error {
	switch s := string(bytes.TrimSpace(b)); s {
	case "null", "false", `""`, "0":
		*t = false
	default:
		*t = true
	}
	return nil
}

// FlagString is a UFDS string flag that also accepts a JSON boolean, so
// fixtures may write true as well as "true".
type FlagString string

// UnmarshalJSON implements json.Unmarshaler.
func (f *FlagString) UnmarshalJSON(b []byte) error {
	var v any
	if err := json.Unmarshal(b, &v); err != nil {
		return err
	}
	switch v := v.(type) {
	case string:
		*f = FlagString(v)
	case bool:
		if v {
			*f = "true"
		} else {
			*f = "false"
		}
	case nil:
		*f = ""
	default:
		*f = FlagString(bytes.TrimSpace(b))
	}
	return nil
}

// Set reports whether the flag is set in the sense the shipped CNS used:
// present, non-empty and not "false".
func (f FlagString) Set() bool { return f != "" && f != "false" }
