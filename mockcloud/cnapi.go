package mockcloud

import (
	"encoding/json"
	"maps"
	"net/http"
	"slices"
	"strings"
)

// serverExtras are CNAPI's extras: the properties of a server it sends
// only when asked (sdc-cnapi lib/models/server.js, getFinal and
// filterFields). Status and last_heartbeat are always asked for by the
// listing endpoint, with or without an extras parameter.
type serverExtras map[string]bool

// everyExtra is extras=all, and what ServerGet sends.
var everyExtra = serverExtras{"agents": true, "disk": true, "last_heartbeat": true, "memory": true,
	"status": true, "sysinfo": true, "vms": true}

// extrasOf reads ServerList's extras parameter (comma-separated); "all"
// and "capacity" ask for everything, as in CNAPI.
func extrasOf(p params) serverExtras {
	out := serverExtras{"status": true, "last_heartbeat": true}
	v, _ := p.get("extras")
	for _, e := range strings.Split(v, ",") {
		if e == "all" || e == "capacity" {
			return everyExtra
		}
		out[e] = true
	}
	return out
}

// extraKeyGate names the extra each gated property of a server belongs to,
// for the properties the mock keeps in Extra.
var extraKeyGate = map[string]string{
	"agents": "agents", "vms": "vms",
	"memory_arc_bytes": "memory", "memory_available_bytes": "memory",
	"memory_provisionable_bytes": "memory", "memory_total_bytes": "memory",
	"disk_cores_quota_bytes": "disk", "disk_cores_quota_used_bytes": "disk",
	"disk_installed_images_used_bytes": "disk", "disk_kvm_quota_bytes": "disk",
	"disk_kvm_quota_used_bytes": "disk", "disk_kvm_zvol_used_bytes": "disk",
	"disk_kvm_zvol_volsize_bytes": "disk", "disk_pool_alloc_bytes": "disk",
	"disk_pool_size_bytes": "disk", "disk_system_used_bytes": "disk",
	"disk_zone_quota_bytes": "disk", "disk_zone_quota_used_bytes": "disk",
}

// serverView copies s for an answer with only the extras asked for: a
// client that forgot to ask for sysinfo must not find it.
func serverView(s *Server, extras serverExtras) Server {
	out := *s
	out.Sysinfo = nil
	if extras["sysinfo"] {
		out.Sysinfo = maps.Clone(s.Sysinfo)
	}
	if !extras["status"] {
		out.Status = ""
	}
	if !extras["last_heartbeat"] {
		out.LastHeartbeat = ""
	}
	out.Extra = nil
	for k, v := range s.Extra {
		if gate, gated := extraKeyGate[k]; !gated || extras[gate] {
			if out.Extra == nil {
				out.Extra = Extra{}
			}
			out.Extra[k] = v
		}
	}
	return out
}

// serverMatches applies ServerList's filters: the booleans setup,
// reserved, headnode and reservoir (sanitized as CNAPI does, cnapiBool),
// hostname and the uuids list.
func serverMatches(s *Server, p params) bool {
	flags := map[string]bool{"setup": s.Setup, "reserved": s.Reserved, "headnode": s.Headnode}
	var reservoir bool
	json.Unmarshal(s.Extra["reservoir"], &reservoir)
	flags["reservoir"] = reservoir
	for name, has := range flags {
		if v, ok := p.get(name); ok && cnapiBool(v) != has {
			return false
		}
	}
	if v, ok := p.get("hostname"); ok && v != s.Hostname {
		return false
	}
	if v, ok := p.get("uuids"); ok && !slices.Contains(strings.Split(v, ","), s.UUID) {
		return false
	}
	return true
}

// listServers serves CNAPI GET /servers a page (limit, offset) at a time,
// after validateListServers; fields narrows each server to the properties
// named.
func (c *Cloud) listServers(w http.ResponseWriter, r *http.Request) {
	p := parseParams(r.URL.RawQuery)
	if ref := validateListServers(p); ref != nil {
		c.refuse(w, r, ref)
		return
	}
	limit, offset := pageBounds(p)
	extras := extrasOf(p)
	c.mu.Lock()
	out := []Server{}
	for _, s := range c.servers {
		if serverMatches(s, p) {
			out = append(out, serverView(s, extras))
		}
	}
	c.mu.Unlock()
	out = page(out, limit, offset)
	fields, _ := p.get("fields")
	if fields == "" {
		writeJSON(w, http.StatusOK, out)
		return
	}
	picked := make([]map[string]any, len(out))
	for i, s := range out {
		picked[i] = pickServerFields(s, strings.Split(fields, ","))
	}
	writeJSON(w, http.StatusOK, picked)
}

// pickServerFields keeps the properties of s named, as ServerList's
// fields does.
func pickServerFields(s Server, names []string) map[string]any {
	b, _ := json.Marshal(s) // a Server always marshals
	var all map[string]any
	json.Unmarshal(b, &all)
	out := map[string]any{}
	for _, n := range names {
		if v, ok := all[n]; ok {
			out[n] = v
		}
	}
	return out
}

// getServer serves CNAPI GET /servers/:server_uuid, which always
// includes sysinfo.
func (c *Cloud) getServer(w http.ResponseWriter, r *http.Request) {
	uuid := r.PathValue("uuid")
	var found *Server
	ref, notFound := validateGetServer(uuid, parseParams(r.URL.RawQuery), func() bool {
		c.mu.Lock()
		defer c.mu.Unlock()
		for _, s := range c.servers {
			if s.UUID == uuid {
				v := serverView(s, everyExtra)
				found = &v
			}
		}
		return found != nil
	})
	switch {
	case ref != nil:
		c.refuse(w, r, ref)
	case notFound:
		writeError(w, http.StatusNotFound, "ResourceNotFound", "Server "+uuid+" not found")
	default:
		writeJSON(w, http.StatusOK, found)
	}
}
