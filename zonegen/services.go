package zonegen

import (
	"fmt"
	"strings"
)

// viewServices collects the VM's services: the triton.cns.services tag
// (or its docker label), plus smartdc_role for admin VMs (except nat) and
// manta_role "loadbalancer" for poseidon VMs. A malformed tag adds a reason
// to d and contributes no services; it never fails the VM.
func viewServices(v *View, d *Decision) []Service {
	var svcs []Service
	key := TagServices
	raw, ok := v.VM.Tags[key]
	if !ok {
		key = DockerLabel + TagServices
		raw, ok = v.VM.Tags[key]
	}
	if ok {
		s, isStr := raw.(string)
		var err error
		if isStr {
			svcs, err = ParseServices(s)
		} else {
			err = fmt.Errorf("%s is a %s, not a string", key, jsonType(raw))
		}
		if err != nil {
			d.add(ReasonInvalidTag, err.Error())
			svcs = nil
		}
	}
	if v.Owner == nil {
		return svcs
	}
	switch v.Owner.Login {
	case "admin":
		if role, _ := v.VM.Tags[tagSmartDCRole].(string); role != "" && role != "nat" {
			svcs = addRole(svcs, d, tagSmartDCRole, role)
		}
	case "poseidon":
		if role, _ := v.VM.Tags[tagMantaRole].(string); role == "loadbalancer" {
			svcs = addRole(svcs, d, tagMantaRole, role)
		}
	}
	return svcs
}

func addRole(svcs []Service, d *Decision, tag, role string) []Service {
	name := strings.ToLower(role)
	if !validLabel(name) {
		d.add(ReasonInvalidRoleTag, tag+"="+role)
		return svcs
	}
	return mergeService(svcs, name, nil)
}

// validLabel reports whether s is one DNS label of [a-z0-9-_], 1–63 octets.
func validLabel(s string) bool {
	if s == "" || len(s) > maxLabel {
		return false
	}
	for i := 0; i < len(s); i++ {
		if c := s[i]; !isLabelChar(c) && c != '_' {
			return false
		}
	}
	return true
}

// jsonType names the JSON type of a decoded value for messages.
func jsonType(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case bool:
		return "boolean"
	case float64, int, int64:
		return "number"
	case []any:
		return "array"
	case map[string]any:
		return "object"
	}
	return fmt.Sprintf("%T", v)
}
