package main

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/cnsd/cnsd/feed"
	"github.com/cnsd/cnsd/zonegen"
)

// previewInput is what preview evaluates: the VMs, the cloud their
// lookups go to, and what was assumed to fill that cloud in.
type previewInput struct {
	cloud   *feed.Static
	fixture bool     // a whole cloud, not one VM
	notes   []string // assumptions made, and VMs that could not be read
}

// previewView is a VM view as preview reads it: the VM raw, so that it
// goes through the same decoder as VMAPI's answers.
type previewView struct {
	VM       json.RawMessage            `json:"vm"`
	Owner    *zonegen.Account           `json:"owner"`
	Server   *zonegen.Server            `json:"server"`
	Networks map[string]zonegen.Network `json:"networks"`
}

// readPreview reads what preview is given: a cloud fixture ({"vms": […],
// …}), a VM view ({"vm": …}) or a bare VMAPI VM ({"uuid": …}). Every VM
// is decoded as cnsd decodes VMAPI's answers. A fixture is a whole cloud
// and is taken as it is: an owner or network it lacks is unknown, as it
// would be to cnsd. What a view or a bare VM leaves out is assumed (see
// assumeMissing) and each assumption noted; at is when the preview is
// evaluated.
func readPreview(ctx context.Context, data []byte, at time.Time) (*previewInput, error) {
	var top map[string]json.RawMessage
	if err := json.Unmarshal(data, &top); err != nil {
		return nil, fmt.Errorf("not a JSON object: %w", err)
	}
	var in previewInput
	var err error
	var given bool // the view gives the compute node
	switch {
	case top["vms"] != nil:
		in.fixture = true
		if in.cloud, err = feed.ReadStatic(data); err != nil {
			return nil, fmt.Errorf("a cloud fixture (it has \"vms\"): %w", err)
		}
	case top["vm"] != nil:
		var v previewView
		if err := json.Unmarshal(data, &v); err != nil {
			return nil, fmt.Errorf("a VM view (it has \"vm\"): %w", err)
		}
		if in.cloud, err = oneVM(v.VM, "a VM view (it has \"vm\")"); err != nil {
			return nil, err
		}
		v.addTo(in.cloud)
		given = v.Server != nil
	case top["uuid"] != nil:
		if in.cloud, err = oneVM(data, "a VMAPI VM (it has \"uuid\")"); err != nil {
			return nil, err
		}
	default:
		return nil, fmt.Errorf(`neither a VM view {"vm": …}, a VMAPI VM {"uuid": …} nor a cloud fixture {"vms": […]}`)
	}
	for _, u := range in.cloud.Unreadable {
		in.notes = append(in.notes, "unreadable, cnsd keeps what it published for it: "+u)
	}
	if !in.fixture {
		in.notes = append(in.notes, assumeMissing(ctx, in.cloud, in.cloud.VMs[0], given, at)...)
	}
	return &in, nil
}

// oneVM reads a cloud of the one VM raw, decoded as VMAPI's answers are.
func oneVM(raw json.RawMessage, what string) (*feed.Static, error) {
	doc, err := json.Marshal(map[string][]json.RawMessage{"vms": {raw}})
	if err != nil {
		return nil, fmt.Errorf("%s: %w", what, err)
	}
	cloud, err := feed.ReadStatic(doc)
	if err == nil && len(cloud.VMs) == 0 {
		err = fmt.Errorf("%s", cloud.Unreadable[0])
	}
	if err != nil {
		return nil, fmt.Errorf("%s: %w", what, err)
	}
	return cloud, nil
}

// addTo puts what the view gives into cloud.
func (v *previewView) addTo(cloud *feed.Static) {
	if v.Owner != nil {
		cloud.AddAccount(*v.Owner)
	}
	if v.Server != nil {
		cloud.AddServer(*v.Server)
	}
	for id, n := range v.Networks {
		if n.UUID == "" {
			n.UUID = id
		}
		cloud.AddNetwork(n)
		for _, pool := range n.Pools {
			cloud.AddPool(feed.Pool{UUID: pool, Networks: []string{n.UUID}})
		}
	}
}

// assumeMissing fills in what cloud lacks for vm and says so, so that the
// preview shows names rather than "unknown": an owner with CNS enabled
// and approved for provisioning and no login; unless server is set, a
// compute node set up and running, its last heartbeat at the preview's
// time; a network with no name, no owners and no pools.
func assumeMissing(ctx context.Context, cloud *feed.Static, vm zonegen.VM, server bool, at time.Time) []string {
	var notes []string
	if _, err := cloud.User(ctx, vm.OwnerUUID); err != nil {
		cloud.AddAccount(zonegen.Account{UUID: vm.OwnerUUID, TritonCNSEnabled: "true", ApprovedForProvisioning: "true"})
		notes = append(notes, fmt.Sprintf("assumed: VM %s: owner %s not given: CNS enabled and approved, without a login", vm.UUID, vm.OwnerUUID))
	}
	if vm.ServerUUID != "" && !server {
		cloud.AddServer(zonegen.Server{UUID: vm.ServerUUID, Status: "running", Setup: true, LastHeartbeat: at})
		notes = append(notes, fmt.Sprintf("assumed: VM %s: compute node %s not given: set up and running, with a heartbeat now", vm.UUID, vm.ServerUUID))
	}
	for _, nic := range vm.NICs {
		if nic.NetworkUUID == "" {
			continue
		}
		if _, err := cloud.Network(ctx, nic.NetworkUUID); err != nil {
			cloud.AddNetwork(zonegen.Network{UUID: nic.NetworkUUID})
			notes = append(notes, fmt.Sprintf("assumed: VM %s: network %s not given: without name, owners or pools", vm.UUID, nic.NetworkUUID))
		}
	}
	return notes
}
