package mockcloud

import (
	"cmp"
	"encoding/json"
	"slices"
	"strconv"
	"strings"
)

// The filters of GET /vms, as sdc-vmapi lib/apis/moray.js
// (_vmsListParams, _addTagsFilter, _addInternalMetadataFilter) builds them.

// equalFilters are the parameters VMAPI matches by equality with the
// VM's property of the same name (ram: max_physical_memory).
var equalFilters = map[string]string{
	"owner_uuid": "owner_uuid", "server_uuid": "server_uuid", "image_uuid": "image_uuid",
	"billing_id": "billing_id", "brand": "brand", "package_name": "package_name",
	"package_version": "package_version", "ram": "max_physical_memory",
}

// matches applies the query's filters to v.
func (lq *listQuery) matches(v *VM) bool {
	for _, name := range lq.p.order {
		want, _ := lq.p.get(name)
		if !lq.matchesOne(v, name, want) {
			return false
		}
	}
	return true
}

func (lq *listQuery) matchesOne(v *VM, name, want string) bool {
	if prop, ok := equalFilters[name]; ok {
		return want == "" || valueText(vmValue(v, prop)) == want
	}
	base, key, _ := strings.Cut(name, ".")
	switch {
	case name == "state" && want == "active":
		return v.State != "destroyed" && v.State != "failed"
	case name == "state":
		return v.State == want
	case name == "uuid":
		return want == "" || v.UUID == want
	case name == "uuids":
		return lq.p.has("uuid") || slices.Contains(strings.Split(want, ","), v.UUID)
	case name == "alias":
		return strings.HasPrefix(v.Alias, want) // VMAPI filters (alias=<alias>*)
	case name == "docker":
		return (vmValue(v, "docker") == true) == (want == "true")
	case name == "create_timestamp":
		ms, _ := timestampMillis(want)
		return vmValue(v, "create_timestamp") == float64(ms)
	case base == "tag":
		val, ok := v.Tags[key]
		return ok && valueText(val) == want
	case base == "internal_metadata":
		val, ok := v.InternalMetadata[key]
		return ok && valueText(val) == want
	}
	return true // paging, fields, sort, and the unevaluated predicate and query
}

// vmValue is v's property key as VMAPI stores it for filtering and
// sorting: create_timestamp in milliseconds, a property the mock does not
// model read from the VM's other keys.
func vmValue(v *VM, key string) any {
	switch key {
	case "uuid":
		return v.UUID
	case "owner_uuid":
		return v.OwnerUUID
	case "server_uuid":
		return v.ServerUUID
	case "alias":
		return v.Alias
	case "state":
		return v.State
	case "brand":
		return v.Brand
	case "image_uuid":
		return v.ImageUUID
	case "billing_id":
		return v.BillingID
	case "max_physical_memory":
		if v.MaxPhysicalMemory == 0 {
			return nil
		}
		return float64(v.MaxPhysicalMemory)
	case "create_timestamp":
		ms, _ := timestampMillis(v.CreateTimestamp)
		return float64(ms)
	}
	b, _ := json.Marshal(v) // a VM always marshals
	var doc map[string]any
	json.Unmarshal(b, &doc)
	return doc[key]
}

// valueText is a stored value as a query compares it: strings as they
// are, numbers and booleans as written, nothing as "".
func valueText(v any) string {
	switch t := v.(type) {
	case nil:
		return ""
	case string:
		return t
	case float64:
		return strconv.FormatFloat(t, 'f', -1, 64)
	}
	return jsString(v)
}

// compareValues orders two stored values: two strings by text; a number
// and another number, or a number and a string holding one, numerically;
// anything else by text; a missing value sorts last.
func compareValues(a, b any) int {
	if a == nil || b == nil {
		return cmp.Compare(boolInt(a == nil), boolInt(b == nil))
	}
	// Two strings compare as text: this is every marker comparison of a
	// uuid listing, which must not pay for parsing uuids as numbers.
	if as, ok := a.(string); ok {
		if bs, ok := b.(string); ok {
			return strings.Compare(as, bs)
		}
	}
	fa, aNum := number(a)
	fb, bNum := number(b)
	if aNum && bNum {
		return cmp.Compare(fa, fb)
	}
	return strings.Compare(valueText(a), valueText(b))
}

func number(v any) (float64, bool) {
	switch t := v.(type) {
	case float64:
		return t, true
	case string:
		f, err := strconv.ParseFloat(t, 64)
		return f, err == nil
	}
	return 0, false
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}
