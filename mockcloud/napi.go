package mockcloud

import (
	"net/http"
	"slices"
	"strconv"
)

// listNetworks serves NAPI GET /networks after validating the query as
// NAPI's LIST_SCHEMA does, with the filters a client uses to guess a
// NIC's network: name and nic_tag (one value or several), vlan_id,
// fabric; a page (limit, offset) at a time.
func (c *Cloud) listNetworks(w http.ResponseWriter, r *http.Request) {
	p := parseParams(r.URL.RawQuery)
	limit, offset, ref := napiListPage(p, networkListSchema)
	if ref != nil {
		c.refuse(w, r, ref)
		return
	}
	c.mu.Lock()
	out := []Network{}
	for _, n := range c.networks {
		if p.has("name") && !slices.Contains(p.vals["name"], n.Name) ||
			p.has("nic_tag") && !slices.Contains(p.vals["nic_tag"], n.NICTag) ||
			p.has("vlan_id") && !vlanMatches(p, n.VLANID) ||
			p.has("fabric") && strconv.FormatBool(n.Fabric) != p.vals.Get("fabric") {
			continue
		}
		out = append(out, *n)
	}
	c.mu.Unlock()
	writeJSON(w, http.StatusOK, page(out, limit, offset))
}

// vlanMatches compares vlan_id as a number, as NAPI stores it.
func vlanMatches(p params, vlan int) bool {
	n, _ := jsNumber(p.vals.Get("vlan_id"))
	return int(n) == vlan
}

// getNetwork serves NAPI GET /networks/:uuid. NAPI answers any parameter
// its GET_SCHEMA refuses (a uuid that is neither a UUID nor "admin", a
// bad owner_uuid) with 404 "network not found", as it does a network it
// lacks; the mock records the first kind as a refusal.
func (c *Cloud) getNetwork(w http.ResponseWriter, r *http.Request) {
	uuid := r.PathValue("uuid")
	if errs := networkGetSchema.validate(withPath(parseParams(r.URL.RawQuery), "uuid", uuid)); len(errs) > 0 {
		c.refuse(w, r, napiNotFound("network"))
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, n := range c.networks {
		if n.UUID == uuid || uuid == "admin" && n.Name == "admin" {
			writeJSON(w, http.StatusOK, n)
			return
		}
	}
	writeError(w, http.StatusNotFound, "ResourceNotFound", "network not found")
}

// listPools serves NAPI GET /network_pools a page (limit, offset) at a
// time after validating the query as the pools' LIST_SCHEMA does.
func (c *Cloud) listPools(w http.ResponseWriter, r *http.Request) {
	limit, offset, ref := napiListPage(parseParams(r.URL.RawQuery), poolListSchema)
	if ref != nil {
		c.refuse(w, r, ref)
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

// getPool serves NAPI GET /network_pools/:uuid; a uuid that is not a
// UUID is 422 InvalidParameters (the pools' GET_SCHEMA).
func (c *Cloud) getPool(w http.ResponseWriter, r *http.Request) {
	uuid := r.PathValue("uuid")
	if errs := poolGetSchema.validate(withPath(parseParams(r.URL.RawQuery), "uuid", uuid)); len(errs) > 0 {
		c.refuse(w, r, napiInvalidParams(errs))
		return
	}
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

// getNIC serves NAPI GET /nics/:mac: from NAPI's own NIC table first (a
// fixture's "nics", where NAPI may know a NIC no VM lists, or know the
// network_uuid a VM's NIC lacks), then from the NICs of the VMs that are
// not destroyed (NAPI frees a destroyed VM's NICs).
func (c *Cloud) getNIC(w http.ResponseWriter, r *http.Request) {
	raw := r.PathValue("mac")
	if errs := nicGetSchema.validate(withPath(parseParams(r.URL.RawQuery), "mac", raw)); len(errs) > 0 {
		c.refuse(w, r, napiInvalidParams(errs))
		return
	}
	mac := macKey(raw)
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, n := range c.nics {
		if macKey(n.MAC) == mac {
			writeJSON(w, http.StatusOK, n)
			return
		}
	}
	for _, v := range c.vms {
		if v.State == "destroyed" {
			continue
		}
		for _, n := range v.NICs {
			if macKey(n.MAC) == mac {
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
