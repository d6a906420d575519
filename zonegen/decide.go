package zonegen

import (
	"fmt"
	"slices"
	"time"
)

// Reason codes say why a VM is or is not listed, or why one of its names
// was skipped. Codes shared with the shipped Triton CNS keep its spelling.
const (
	ReasonInvalidTag      = "invalid_tag"         // triton.cns.services is malformed
	ReasonStatusDown      = "inst_en_flag"        // triton.cns.status is present and not "up"
	ReasonStatusMissing   = "status_missing"      // require_status_up and no triton.cns.status
	ReasonCNDown          = "cn_down"             // the compute node is down
	ReasonVMDown          = "vm_down"             // state is not "running"
	ReasonUserDisabled    = "user_en_flag"        // owner's triton_cns_enabled missing or "false"
	ReasonUserNotApproved = "user_not_approved"   // owner not approved_for_provisioning
	ReasonReversePTR      = "ptr"                 // triton.cns.reverse_ptr forces instance listing
	ReasonInvalidPTR      = "invalid_reverse_ptr" // triton.cns.reverse_ptr is not a host name
	ReasonAdmin           = "admin"               // admin-owned VM with a service
	ReasonPoseidon        = "poseidon"            // poseidon-owned VM with a service
	ReasonDisabled        = "inst_en_tag"         // triton.cns.disable is set
	ReasonDestroyed       = "destroyed"           // destroyed, or state destroyed/failed
	ReasonOwnerUnknown    = "owner_unknown"       // the owner lookup has not succeeded
	ReasonServerUnknown   = "server_unknown"      // the compute node lookup has not succeeded
	ReasonNetworkUnknown  = "network_unknown"     // a NIC's network lookup has not succeeded
	ReasonLabelTooLong    = "label_too_long"      // a name was skipped: label over 63 octets
	ReasonNameTooLong     = "name_too_long"       // a name was skipped: over 253 octets
	ReasonEmptyLabel      = "empty_label"         // a name was skipped: empty alias/login/network label
	ReasonNoAddress       = "no_address"          // a NIC address was dhcp, addrconf or unparsable
	ReasonAdminNIC        = "admin_nic"           // a NIC on the admin or manta network
	ReasonNoZone          = "no_zone"             // a NIC's network maps to no zone
	ReasonInvalidRoleTag  = "invalid_role_tag"    // smartdc_role/manta_role is not a DNS label
	ReasonHysteresisHolds = "hysteresis_holds"    // set by the pipeline: removal delayed
)

// Reason is one rule that applied to a VM, with details for people.
type Reason struct {
	Code   string `json:"code"`
	Detail string `json:"detail,omitempty"`
}

func (r Reason) String() string {
	if r.Detail == "" {
		return r.Code
	}
	return r.Code + ": " + r.Detail
}

// Decision is the outcome of the inclusion rules for one VM.
type Decision struct {
	// Unresolved means the owner or compute node is not known yet: the
	// VM keeps whatever it last published and nothing else applies.
	Unresolved bool
	// Instance: the VM's instance names are published.
	Instance bool
	// Services are the VM's services; Listed says whether the VM's
	// addresses are published under each (else only "verifying:" TXT).
	Services []ServiceListing
	// SelfRemoval: services are withdrawn only because the VM reported
	// itself not up, so hysteresis may delay it. False when any hard
	// reason (CN down, stopped, account, disable) applies.
	SelfRemoval bool
	// PTRName is the valid triton.cns.reverse_ptr tag, if any.
	PTRName string
	Reasons []Reason
}

// ServiceListing is one service of a VM and whether the VM is listed in it.
type ServiceListing struct {
	Service
	Listed bool
}

// DecideOptions are the configurable parts of the decisions.
type DecideOptions struct {
	RequireStatusUp bool          // an absent triton.cns.status means down (RFD 1)
	HeartbeatLimit  time.Duration // a CN not running is down after this long without heartbeat (default 1h)
	BootGrace       time.Duration // a CN booted this recently is down (default 120s)
}

// DefaultDecideOptions returns the defaults docs/pipeline.md states (The
// decisions, Compute nodes).
func DefaultDecideOptions() DecideOptions {
	return DecideOptions{HeartbeatLimit: time.Hour, BootGrace: 120 * time.Second}
}

// Decide applies the inclusion rules of docs/pipeline.md, The decisions
// (later rules override earlier ones), and its compute-node rule to one VM
// view at time now.
// Every rule that applies adds its reason, in a stable order: the lookups
// that have not succeeded, the tags that could not be read, then rules 2
// to 5 in turn. A rule that needs a lookup that failed is not evaluated.
// Rule 5 decides alone (nothing is listed, whatever the lookups); otherwise
// a failed lookup makes the decision unresolved.
func Decide(v *View, o DecideOptions, now time.Time) Decision {
	var d Decision
	vm := &v.VM
	unresolved := d.applyLookups(v)
	svcs := viewServices(v, &d)
	d.Instance = true
	inServices := d.applyDown(v, o, now)
	if v.Owner != nil && !d.applyOwner(v.Owner) {
		inServices = false
	}
	d.applyPTR(vm)
	if v.Owner != nil && (v.Owner.Login == "admin" || v.Owner.Login == "poseidon") && len(svcs) > 0 {
		d.Instance, inServices, d.SelfRemoval = true, true, false
		d.add(v.Owner.Login, "control-plane VM with a service")
	}
	switch {
	case d.applyGone(vm):
		d.Instance, d.SelfRemoval, d.PTRName = false, false, ""
		return d
	case unresolved:
		d.Unresolved, d.Instance, d.SelfRemoval, d.PTRName = true, false, false, ""
		return d
	}
	d.Services = make([]ServiceListing, len(svcs))
	for i, s := range svcs {
		d.Services[i] = ServiceListing{Service: s, Listed: inServices && d.Instance}
	}
	return d
}

func (d *Decision) add(code, detail string) {
	d.Reasons = append(d.Reasons, Reason{Code: code, Detail: detail})
}

// applyLookups adds a reason for each lookup of v that has not succeeded
// and reports whether there was one.
func (d *Decision) applyLookups(v *View) bool {
	n := len(d.Reasons)
	if v.Owner == nil {
		d.add(ReasonOwnerUnknown, v.VM.OwnerUUID)
	}
	if v.VM.ServerUUID != "" && v.Server == nil {
		d.add(ReasonServerUnknown, v.VM.ServerUUID)
	}
	for _, uuid := range unknownNetworks(v) {
		d.add(ReasonNetworkUnknown, uuid)
	}
	return len(d.Reasons) > n
}

// applyGone applies rule 5 and reports whether the VM lists nothing:
// disabled by its tag, destroyed, or failed. Both reasons are listed when
// both apply.
func (d *Decision) applyGone(vm *VM) bool {
	gone := false
	if key, val, ok := disabled(vm); ok {
		d.add(ReasonDisabled, fmt.Sprintf("%s=%v", key, val))
		gone = true
	}
	if vm.Destroyed || vm.State == "destroyed" || vm.State == "failed" {
		detail := "state " + vm.State
		if vm.Destroyed {
			detail = "destroyed is set, " + detail
		}
		d.add(ReasonDestroyed, detail)
		gone = true
	}
	return gone
}

// applyDown applies rule 2 and reports whether the VM stays in services.
func (d *Decision) applyDown(v *View, o DecideOptions, now time.Time) bool {
	in, hard := true, false
	status, ok := v.VM.CustomerMetadata[MetaStatus]
	switch {
	case ok && status != "up":
		in = false
		d.add(ReasonStatusDown, MetaStatus+"="+status)
	case !ok && o.RequireStatusUp:
		in = false
		d.add(ReasonStatusMissing, "require_status_up is set and "+MetaStatus+" is absent")
	}
	if v.Server != nil {
		if down, why := ServerDown(v.Server, o, now); down {
			in, hard = false, true
			d.add(ReasonCNDown, why)
		}
	}
	if v.VM.State != "running" {
		in, hard = false, true
		d.add(ReasonVMDown, "state "+v.VM.State)
	}
	d.SelfRemoval = !in && !hard
	return in
}

// applyOwner applies rule 3 and reports whether the owner allows listing.
func (d *Decision) applyOwner(a *Account) bool {
	switch {
	case !a.TritonCNSEnabled.Set():
		d.add(ReasonUserDisabled, "triton_cns_enabled is "+flagDetail(a.TritonCNSEnabled))
	case !a.ApprovedForProvisioning.Set():
		d.add(ReasonUserNotApproved, "approved_for_provisioning is "+flagDetail(a.ApprovedForProvisioning))
	default:
		return true
	}
	d.Instance, d.SelfRemoval = false, false
	return false
}

func flagDetail(f FlagString) string {
	if f == "" {
		return "missing"
	}
	return `"` + string(f) + `"`
}

// applyPTR keeps the shipped rule that a valid reverse_ptr tag lists the
// instance even when the owner has not enabled CNS. As in Triton CNS the
// plain tag is tried first and the docker label when the plain tag is
// absent or not a host name; each one that is not adds a reason.
func (d *Decision) applyPTR(vm *VM) {
	for _, key := range [2]string{TagReversePTR, DockerLabel + TagReversePTR} {
		val, ok := vm.Tags[key].(string)
		if !ok || val == "" {
			continue
		}
		if !IsHostName(val) {
			d.add(ReasonInvalidPTR, key+"="+val)
			continue
		}
		d.PTRName = val
		d.Instance = true
		d.add(ReasonReversePTR, d.PTRName)
		return
	}
}

// disabled reads triton.cns.disable: any value but boolean false or the
// string "false" disables the VM (the shipped CNS honoured only the
// boolean for the plain tag).
func disabled(vm *VM) (key string, val any, ok bool) {
	for _, k := range [2]string{TagDisable, DockerLabel + TagDisable} {
		v, ok := vm.Tags[k]
		if !ok {
			continue
		}
		if b, isBool := v.(bool); isBool && !b {
			continue
		}
		if s, isStr := v.(string); isStr && s == "false" {
			continue
		}
		return k, v, true
	}
	return "", nil, false
}

// unknownNetworks returns, once each in NIC order, the networks of
// publishable NICs that the view does not describe.
func unknownNetworks(v *View) []string {
	var out []string
	for i := range v.VM.NICs {
		nic := &v.VM.NICs[i]
		if nic.NetworkUUID == "" || isAdminNIC(nic) || slices.Contains(out, nic.NetworkUUID) {
			continue
		}
		if _, ok := v.Networks[nic.NetworkUUID]; !ok {
			out = append(out, nic.NetworkUUID)
		}
	}
	return out
}

// Hold keeps the VM listed in service name although it reported itself
// down: the hysteresis policy has not let the removal take effect yet. It
// reports whether the VM has such a service and the removal was
// self-reported (hard removals are never held).
func (d *Decision) Hold(name string) bool {
	if !d.SelfRemoval || !d.Instance {
		return false
	}
	for i := range d.Services {
		if d.Services[i].Name == name && !d.Services[i].Listed {
			d.Services[i].Listed = true
			d.add(ReasonHysteresisHolds, "service "+name)
			return true
		}
	}
	return false
}
