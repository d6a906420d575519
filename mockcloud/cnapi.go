package mockcloud

import (
	"encoding/json"
	"maps"
	"net/http"
	"slices"
	"strings"
)

// serverView copies s for an answer, keeping sysinfo only when asked for.
func serverView(s *Server, sysinfo bool) Server {
	out := *s
	out.Sysinfo = nil
	if sysinfo {
		out.Sysinfo = maps.Clone(s.Sysinfo)
	}
	return out
}

// wantsSysinfo reads CNAPI's extras parameter (comma-separated; "all"
// includes everything). Other extras are accepted and have nothing to add.
func wantsSysinfo(p params) bool {
	v, _ := p.get("extras")
	extras := strings.Split(v, ",")
	return slices.Contains(extras, "sysinfo") || slices.Contains(extras, "all")
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
	sysinfo := wantsSysinfo(p)
	c.mu.Lock()
	out := []Server{}
	for _, s := range c.servers {
		if serverMatches(s, p) {
			out = append(out, serverView(s, sysinfo))
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
				v := serverView(s, true)
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
