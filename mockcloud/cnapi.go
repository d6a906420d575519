package mockcloud

import (
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
func wantsSysinfo(r *http.Request) bool {
	extras := strings.Split(r.URL.Query().Get("extras"), ",")
	return slices.Contains(extras, "sysinfo") || slices.Contains(extras, "all")
}

// listServers serves CNAPI GET /servers a page (limit, offset) at a time;
// setup=true|false filters, other parameters are ignored.
func (c *Cloud) listServers(w http.ResponseWriter, r *http.Request) {
	limit, offset, ok := pageOf(w, r.URL.Query())
	if !ok {
		return
	}
	setup := r.URL.Query().Get("setup")
	sysinfo := wantsSysinfo(r)
	c.mu.Lock()
	out := []Server{}
	for _, s := range c.servers {
		if setup == "true" && !s.Setup || setup == "false" && s.Setup {
			continue
		}
		out = append(out, serverView(s, sysinfo))
	}
	c.mu.Unlock()
	writeJSON(w, http.StatusOK, page(out, limit, offset))
}

// getServer serves CNAPI GET /servers/:uuid, which always includes sysinfo.
func (c *Cloud) getServer(w http.ResponseWriter, r *http.Request) {
	uuid := r.PathValue("uuid")
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, s := range c.servers {
		if s.UUID == uuid {
			writeJSON(w, http.StatusOK, serverView(s, true))
			return
		}
	}
	writeError(w, http.StatusNotFound, "ResourceNotFound", "server "+uuid+" not found")
}
