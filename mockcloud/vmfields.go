package mockcloud

import (
	"encoding/json"
	"slices"
	"strings"
)

// vmListFields are the names ListVms accepts in its fields parameter:
// VMAPI checks each against the names of its VM_FIELDS table (the VM
// properties a client may set or filter on, sdc-vmapi
// lib/common/validation.js), plus "*" and "role_tags" (validVmField).
// The rendered VM has fields the table lacks — nics, destroyed,
// create_timestamp, zonepath — and ListVms refuses to be asked for them.
var vmListFields = []string{
	"alias", "autoboot", "billing_id", "brand", "cpu_cap", "cpu_shares",
	"cpu_type", "customer_metadata", "delegate_dataset", "disk_driver",
	"dns_domain", "docker", "do_not_inventory", "firewall_enabled",
	"firewall_rules", "fs_allowed", "hostname", "indestructible_delegated",
	"indestructible_zoneroot", "init_name", "internal_metadata",
	"kernel_version", "limit_priv", "locality", "maintain_resolvers",
	"max_locked_memory", "max_lwps", "max_physical_memory", "max_swap",
	"mdata_exec_timeout", "networks", "nic_driver", "last_modified",
	"overprovision_cpu", "overprovision_memory", "owner_uuid",
	"package_name", "package_version", "quota", "ram", "resolvers", "state",
	"server_uuid", "tags", "tmpfs", "uuid", "vcpus", "volumes",
	"zfs_data_compression", "zfs_io_priority", "zfs_snapshot_limit",
	"zlog_max_size", "zone_state",
	"*", "role_tags",
}

// validListFields reports whether every comma-separated name of a ListVms
// fields parameter is one VMAPI accepts.
func validListFields(csv string) bool {
	for _, f := range strings.Split(csv, ",") {
		if !slices.Contains(vmListFields, f) {
			return false
		}
	}
	return true
}

// pickFields renders a VM as VMAPI's renderVms does for a fields
// parameter: only the named properties, a name the VM lacks left out,
// "*" meaning every property. role_tags, which VMAPI reads from another
// bucket, is always an empty list here.
func pickFields(v VM, csv string) map[string]any {
	b, _ := json.Marshal(v) // a VM always marshals
	var all map[string]any
	json.Unmarshal(b, &all)
	names := strings.Split(csv, ",")
	if slices.Contains(names, "*") {
		all["role_tags"] = []string{}
		return all
	}
	out := make(map[string]any, len(names))
	for _, n := range names {
		if n == "role_tags" {
			out[n] = []string{}
		} else if val, ok := all[n]; ok {
			out[n] = val
		}
	}
	return out
}
