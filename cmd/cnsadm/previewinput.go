package main

import (
	"encoding/json"
	"fmt"
	"slices"

	"github.com/cnsd/cnsd/zonegen"
)

// previewFixture is a simulated-cloud fixture (docs/mockcloud.md): each
// array in its API's own shape. Fields naming does not use are ignored.
type previewFixture struct {
	VMs      []zonegen.VM      `json:"vms"`
	Users    []zonegen.Account `json:"users"`
	Servers  []zonegen.Server  `json:"servers"`
	Networks []zonegen.Network `json:"networks"`
	Pools    []struct {
		UUID     string   `json:"uuid"`
		Networks []string `json:"networks"`
	} `json:"network_pools"`
}

// previewViews reads what preview is given: a VM view ({"vm": …}), a bare
// VMAPI VM ({"uuid": …}), or a fixture of a whole cloud ({"vms": […], …}),
// and returns a view per VM. What a view or a bare VM leaves out is
// assumed, so that the preview shows names rather than "unknown": an
// owner with CNS enabled and approved for provisioning and no login, and
// a network with no name, no owners and no pools; each assumption is
// returned as a note. A fixture is a whole cloud and is taken as it is:
// an owner or network it lacks is unknown, as it would be to cnsd.
func previewViews(data []byte) ([]zonegen.View, []string, error) {
	var top map[string]json.RawMessage
	if err := json.Unmarshal(data, &top); err != nil {
		return nil, nil, fmt.Errorf("not a JSON object: %w", err)
	}
	var views []zonegen.View
	switch {
	case top["vms"] != nil:
		var f previewFixture
		if err := json.Unmarshal(data, &f); err != nil {
			return nil, nil, fmt.Errorf("a cloud fixture (it has \"vms\"): %w", err)
		}
		return f.views(), nil, nil
	case top["vm"] != nil:
		var v zonegen.View
		if err := json.Unmarshal(data, &v); err != nil {
			return nil, nil, fmt.Errorf("a VM view (it has \"vm\"): %w", err)
		}
		views = []zonegen.View{v}
	case top["uuid"] != nil:
		var vm zonegen.VM
		if err := json.Unmarshal(data, &vm); err != nil {
			return nil, nil, fmt.Errorf("a VMAPI VM (it has \"uuid\"): %w", err)
		}
		views = []zonegen.View{{VM: vm}}
	default:
		return nil, nil, fmt.Errorf(`neither a VM view {"vm": …}, a VMAPI VM {"uuid": …} nor a cloud fixture {"vms": […]}`)
	}
	var notes []string
	for i := range views {
		notes = append(notes, assumeMissing(&views[i])...)
	}
	return views, notes, nil
}

// views joins each VM with its owner, server and networks.
func (f *previewFixture) views() []zonegen.View {
	users := map[string]*zonegen.Account{}
	for i := range f.Users {
		users[f.Users[i].UUID] = &f.Users[i]
	}
	servers := map[string]*zonegen.Server{}
	for i := range f.Servers {
		servers[f.Servers[i].UUID] = &f.Servers[i]
	}
	networks := map[string]zonegen.Network{}
	for _, n := range f.Networks {
		for _, p := range f.Pools {
			if slices.Contains(p.Networks, n.UUID) {
				n.Pools = append(n.Pools, p.UUID)
			}
		}
		networks[n.UUID] = n
	}
	views := make([]zonegen.View, len(f.VMs))
	for i, vm := range f.VMs {
		views[i] = zonegen.View{VM: vm, Owner: users[vm.OwnerUUID], Server: servers[vm.ServerUUID], Networks: networks}
	}
	return views
}

// assumeMissing fills in the owner and the networks v lacks and says so.
func assumeMissing(v *zonegen.View) []string {
	var notes []string
	if v.Owner == nil {
		v.Owner = &zonegen.Account{UUID: v.VM.OwnerUUID, TritonCNSEnabled: "true", ApprovedForProvisioning: "true"}
		notes = append(notes, fmt.Sprintf("VM %s: owner %s not given; assumed CNS enabled and approved, without a login", v.VM.UUID, v.VM.OwnerUUID))
	}
	networks := make(map[string]zonegen.Network, len(v.Networks))
	for id, n := range v.Networks {
		networks[id] = n
	}
	for _, nic := range v.VM.NICs {
		if nic.NetworkUUID == "" {
			continue
		}
		if _, ok := networks[nic.NetworkUUID]; !ok {
			networks[nic.NetworkUUID] = zonegen.Network{UUID: nic.NetworkUUID}
			notes = append(notes, fmt.Sprintf("VM %s: network %s not given; assumed without name, owners or pools", v.VM.UUID, nic.NetworkUUID))
		}
	}
	v.Networks = networks
	return notes
}
