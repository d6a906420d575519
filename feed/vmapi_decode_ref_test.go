package feed

import (
	"encoding/json"
	"errors"
	"fmt"
	"strconv"

	"github.com/cnsd/cnsd/zonegen"
)

// decodeVMRef is decodeVM as it was before it became a single pass
// (json.Unmarshal into a map of raw messages, then each field again):
// the reference FuzzDecodeVMAgrees holds decodeVM to, and the "before"
// of BenchmarkDecodeVM.
//
// It reads one VMAPI VM object. It is strict about what naming
// depends on (uuid, and the string fields being strings) and lenient where
// VMAPI's own history is: nulls stand for absent fields (but not for
// absent metadata keys, see vmMetadataRef), customer_metadata values that are
// not strings keep their JSON text, tags keep their JSON values, and a NIC
// field of the wrong type is dropped rather than losing the whole VM.
func decodeVMRef(b []byte) (zonegen.VM, error) {
	var obj map[string]json.RawMessage
	if err := json.Unmarshal(b, &obj); err != nil || obj == nil {
		return zonegen.VM{}, errors.New("decode vm: not a json object")
	}
	var vm zonegen.VM
	var err error
	if vm.UUID, err = vmString(obj, "uuid"); err != nil || vm.UUID == "" {
		return zonegen.VM{}, errVMNoUUID
	}
	for _, f := range []struct {
		name string
		dst  *string
	}{{"owner_uuid", &vm.OwnerUUID}, {"alias", &vm.Alias}, {"state", &vm.State}, {"server_uuid", &vm.ServerUUID}} {
		if *f.dst, err = vmString(obj, f.name); err != nil {
			return zonegen.VM{}, fmt.Errorf("decode vm %s: %w", vm.UUID, err)
		}
	}
	if raw, ok := obj["destroyed"]; ok {
		_ = vm.Destroyed.UnmarshalJSON(raw) // Truthy accepts every JSON value
	}
	if vm.Tags, err = vmTagsRef(obj["tags"]); err != nil {
		return zonegen.VM{}, fmt.Errorf("decode vm %s: %w", vm.UUID, err)
	}
	if vm.CustomerMetadata, err = vmMetadataRef(obj["customer_metadata"]); err != nil {
		return zonegen.VM{}, fmt.Errorf("decode vm %s: %w", vm.UUID, err)
	}
	if vm.NICs, err = vmNICsRef(obj["nics"]); err != nil {
		return zonegen.VM{}, fmt.Errorf("decode vm %s: %w", vm.UUID, err)
	}
	return vm, nil
}

func vmTagsRef(raw json.RawMessage) (map[string]any, error) {
	if vmJSONNull(raw) {
		return nil, nil
	}
	var tags map[string]any
	if err := json.Unmarshal(raw, &tags); err != nil {
		return nil, fmt.Errorf("field tags: want an object")
	}
	return tags, nil
}

// vmMetadataRef keeps every key, whatever its value, because Triton CNS
// tested triton.cns.status for presence and then against the string "up":
// a boolean, a number or null there means not up (docs/differences.md).
// VMAPI stores strings, numbers and booleans, older clouds anything; a
// value that is not a string is kept as its JSON text, null as "" (so an
// acme-challenge of null publishes nothing).
func vmMetadataRef(raw json.RawMessage) (map[string]string, error) {
	if vmJSONNull(raw) {
		return nil, nil
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(raw, &m); err != nil {
		return nil, fmt.Errorf("field customer_metadata: want an object")
	}
	out := make(map[string]string, len(m))
	for k, v := range m {
		var s string
		if vmJSONNull(v) {
			out[k] = ""
		} else if json.Unmarshal(v, &s) == nil {
			out[k] = s
		} else if text, ok := jsonText(v); ok {
			out[k] = text
		}
	}
	return out, nil
}

// vmNICsRef reads the nics array; an element that is not an object makes
// the VM malformed, a NIC field of the wrong type is only dropped.
func vmNICsRef(raw json.RawMessage) ([]zonegen.NIC, error) {
	if vmJSONNull(raw) {
		return nil, nil
	}
	var list []json.RawMessage
	if err := json.Unmarshal(raw, &list); err != nil {
		return nil, fmt.Errorf("field nics: want an array")
	}
	nics := make([]zonegen.NIC, 0, len(list))
	for i, r := range list {
		var obj map[string]json.RawMessage
		if err := json.Unmarshal(r, &obj); err != nil || obj == nil {
			return nil, fmt.Errorf("nics[%d]: want an object", i)
		}
		nics = append(nics, vmNICRef(obj))
	}
	return nics, nil
}

func vmNICRef(obj map[string]json.RawMessage) zonegen.NIC {
	str := func(name string) string {
		s, _ := vmString(obj, name)
		return s
	}
	n := zonegen.NIC{IP: str("ip"), MAC: str("mac"), NetworkUUID: str("network_uuid"), NICTag: str("nic_tag")}
	n.IPs = vmNICIPsRef(obj["ips"])
	n.VLANID = vmNICVLANRef(obj["vlan_id"])
	return n
}

// vmNICIPsRef accepts an array of strings or a single string; null, empty
// strings and elements of other types are skipped.
func vmNICIPsRef(raw json.RawMessage) []string {
	var one string
	if json.Unmarshal(raw, &one) == nil && !vmJSONNull(raw) {
		if one == "" {
			return nil
		}
		return []string{one}
	}
	var list []any
	if json.Unmarshal(raw, &list) != nil {
		return nil
	}
	var out []string
	for _, v := range list {
		if s, ok := v.(string); ok && s != "" {
			out = append(out, s)
		}
	}
	return out
}

// vmNICVLANRef accepts a number or a numeric string; anything else is VLAN
// 0, which is what an absent vlan_id means.
func vmNICVLANRef(raw json.RawMessage) int {
	var n int
	if json.Unmarshal(raw, &n) == nil {
		return n
	}
	var s string
	if json.Unmarshal(raw, &s) == nil {
		if n, err := strconv.Atoi(s); err == nil {
			return n
		}
	}
	return 0
}
