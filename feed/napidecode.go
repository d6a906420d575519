package feed

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/cnsd/cnsd/zonegen"
)

// errNoMAC rejects a NIC without the MAC it is keyed by.
var errNoMAC = errors.New("no mac")

// Pool is a NAPI network pool: zones may list a pool's uuid to mean each
// of its member networks.
type Pool struct {
	UUID     string   `json:"uuid"`
	Name     string   `json:"name"`
	Networks []string `json:"networks"`
}

// napiNetwork is the part of a NAPI network object naming reads.
type napiNetwork struct {
	UUID       string   `json:"uuid"`
	Name       string   `json:"name"`
	OwnerUUIDs []string `json:"owner_uuids"`
}

// napiNIC is the part of a NAPI NIC object that repairs a VMAPI NIC.
type napiNIC struct {
	MAC         string   `json:"mac"`
	IP          string   `json:"ip"`
	IPs         []string `json:"ips"`
	NetworkUUID string   `json:"network_uuid"`
	NICTag      string   `json:"nic_tag"`
	VLANID      int      `json:"vlan_id"`
	// BelongsToUUID is the VM (or server, or other owner) the NIC is
	// NAPI's record for; only GET /nics/:mac is read for it.
	BelongsToUUID string `json:"belongs_to_uuid"`
}

// decodeNetwork decodes a NAPI GET /networks/:uuid answer. Pools is left
// empty: membership comes from the pool listing.
func decodeNetwork(body []byte) (zonegen.Network, error) {
	var n napiNetwork
	if err := json.Unmarshal(body, &n); err != nil {
		return zonegen.Network{}, fmt.Errorf("decode network: %w", err)
	}
	if n.UUID == "" {
		return zonegen.Network{}, fmt.Errorf("decode network: %w", errNoUUID)
	}
	return zonegen.Network{UUID: n.UUID, Name: n.Name, OwnerUUIDs: n.OwnerUUIDs}, nil
}

// decodePools decodes a NAPI GET /network_pools answer. Only a body that is
// not a JSON array is an error; malformed pools are returned in bad.
func decodePools(body []byte) (pools []Pool, bad []badEntry, err error) {
	var raws []json.RawMessage
	if err := json.Unmarshal(body, &raws); err != nil {
		return nil, nil, fmt.Errorf("decode network pools: %w", err)
	}
	for _, raw := range raws {
		var p Pool
		err := json.Unmarshal(raw, &p)
		if err == nil && p.UUID == "" {
			err = errNoUUID
		}
		if err != nil {
			bad = append(bad, badEntry{ID: entryID(raw, "uuid"), Err: fmt.Errorf("decode network pool: %w", err)})
			continue
		}
		pools = append(pools, p)
	}
	return pools, bad, nil
}

// NAPINIC is NAPI's record of a NIC: the NIC itself and what it belongs
// to, which a legacy NIC repair checks against the VM.
type NAPINIC struct {
	zonegen.NIC
	BelongsToUUID string
}

// decodeNIC decodes a NAPI GET /nics/:mac answer.
func decodeNIC(body []byte) (NAPINIC, error) {
	var n napiNIC
	if err := json.Unmarshal(body, &n); err != nil {
		return NAPINIC{}, fmt.Errorf("decode nic: %w", err)
	}
	if n.MAC == "" {
		return NAPINIC{}, fmt.Errorf("decode nic: %w", errNoMAC)
	}
	return NAPINIC{NIC: zonegen.NIC{MAC: n.MAC, IP: n.IP, IPs: n.IPs, NetworkUUID: n.NetworkUUID,
		NICTag: n.NICTag, VLANID: n.VLANID}, BelongsToUUID: n.BelongsToUUID}, nil
}

// canonicalMAC returns mac as lower-case colon-separated octets, accepting
// colons, dashes or no separators, as NAPI does; ok is false for anything
// that is not six octets of hex.
func canonicalMAC(mac string) (string, bool) {
	hex := strings.ToLower(strings.NewReplacer(":", "", "-", "").Replace(mac))
	if len(hex) != 12 || strings.Trim(hex, "0123456789abcdef") != "" {
		return "", false
	}
	var b strings.Builder
	for i := 0; i < 12; i += 2 {
		if i > 0 {
			b.WriteByte(':')
		}
		b.WriteString(hex[i : i+2])
	}
	return b.String(), true
}
