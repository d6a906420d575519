package mockcloud

import (
	"net/http"
	"strconv"
	"strings"
)

// listNetworks serves NAPI GET /networks with the filters a client uses to
// guess a NIC's network: name, nic_tag, vlan_id, fabric; a page (limit,
// offset) at a time.
func (c *Cloud) listNetworks(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	limit, offset, ok := pageOf(w, q)
	if !ok {
		return
	}
	c.mu.Lock()
	out := []Network{}
	for _, n := range c.networks {
		if q.Has("name") && n.Name != q.Get("name") ||
			q.Has("nic_tag") && n.NICTag != q.Get("nic_tag") ||
			q.Has("vlan_id") && strconv.Itoa(n.VLANID) != q.Get("vlan_id") ||
			q.Has("fabric") && strconv.FormatBool(n.Fabric) != q.Get("fabric") {
			continue
		}
		out = append(out, *n)
	}
	c.mu.Unlock()
	writeJSON(w, http.StatusOK, page(out, limit, offset))
}

func (c *Cloud) getNetwork(w http.ResponseWriter, r *http.Request) {
	uuid := r.PathValue("uuid")
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, n := range c.networks {
		if n.UUID == uuid {
			writeJSON(w, http.StatusOK, n)
			return
		}
	}
	writeError(w, http.StatusNotFound, "ResourceNotFound", "network not found")
}

// listPools serves NAPI GET /network_pools a page (limit, offset) at a time.
func (c *Cloud) listPools(w http.ResponseWriter, r *http.Request) {
	limit, offset, ok := pageOf(w, r.URL.Query())
	if !ok {
		return
	}
	c.mu.Lock()
	out := []Pool{}
	for _, p := range c.pools {
		out = append(out, *p)
	}
	c.mu.Unlock()
	writeJSON(w, http.StatusOK, page(out, limit, offset))
}

func (c *Cloud) getPool(w http.ResponseWriter, r *http.Request) {
	uuid := r.PathValue("uuid")
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, p := range c.pools {
		if p.UUID == uuid {
			writeJSON(w, http.StatusOK, p)
			return
		}
	}
	writeError(w, http.StatusNotFound, "ResourceNotFound", "network pool not found")
}

// normalMAC accepts a MAC with or without colons, in any case, as NAPI
// does, and returns the bare lower-case hex digits.
func normalMAC(mac string) string {
	return strings.ToLower(strings.ReplaceAll(strings.ReplaceAll(mac, ":", ""), "-", ""))
}

// getNIC serves NAPI GET /nics/:mac: from NAPI's own NIC table first (a
// fixture's "nics", where NAPI may know a NIC no VM lists, or know the
// network_uuid a VM's NIC lacks), then from the NICs of the VMs that are
// not destroyed (NAPI frees a destroyed VM's NICs).
func (c *Cloud) getNIC(w http.ResponseWriter, r *http.Request) {
	mac := normalMAC(r.PathValue("mac"))
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, n := range c.nics {
		if normalMAC(n.MAC) == mac {
			writeJSON(w, http.StatusOK, n)
			return
		}
	}
	for _, v := range c.vms {
		if v.State == "destroyed" {
			continue
		}
		for _, n := range v.NICs {
			if normalMAC(n.MAC) == mac {
				writeJSON(w, http.StatusOK, napiNIC(v, n))
				return
			}
		}
	}
	writeError(w, http.StatusNotFound, "ResourceNotFound", "nic not found")
}

// napiNIC derives NAPI's record of a VM's NIC; the keys of the VM NIC that
// the mock does not model (allow_ip_spoofing, …) are NAPI's too, except
// those NAPINIC models itself (state, belongs_to_uuid, …).
func napiNIC(v *VM, n NIC) NAPINIC {
	state := "running"
	if v.State != "running" {
		state = "stopped"
	}
	return NAPINIC{MAC: n.MAC, IP: n.IP, IPs: n.IPs, Primary: n.Primary, State: state,
		BelongsToType: "zone", BelongsToUUID: v.UUID, OwnerUUID: v.OwnerUUID,
		NetworkUUID: n.NetworkUUID, NICTag: n.NICTag, VLANID: n.VLANID, Netmask: n.Netmask,
		Gateway: n.Gateway, MTU: n.MTU, Model: n.Model, CNUUID: v.ServerUUID, Extra: n.Extra.without(napiNICFields{})}
}
