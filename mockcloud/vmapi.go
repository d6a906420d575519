package mockcloud

import (
	"encoding/json"
	"net/http"
	"slices"
	"strconv"
	"strings"
)

// maxListLimit is VMAPI's default and largest page size.
const maxListLimit = 1000

// listQuery is a GET /vms query that passed validateListVms.
type listQuery struct {
	p      params
	limit  int
	offset int
	marker map[string]any // nil: none (absent, or JSON null)
	sort   []sortOption   // as VMAPI hands them to moray
	fields string         // the fields parameter, "" for whole VMs
}

// sortOption is one moray sort criterion; order "" is one VMAPI leaves
// unset (sort=alias), which sorts ascending.
type sortOption struct{ key, order string }

// newListQuery reads a validated query. The sort is VMAPI's
// _sortOptionsFromSortParam: the key asked for (ram meaning
// max_physical_memory), then uuid descending unless the key is uuid.
func newListQuery(p params) listQuery {
	lq := listQuery{p: p, limit: maxListLimit}
	if v, ok := p.get("limit"); ok {
		n, _ := jsNumber(v)
		lq.limit = int(n)
	}
	if v, ok := p.get("offset"); ok {
		n, _ := jsNumber(v)
		lq.offset = int(n)
	}
	if v, ok := p.get("marker"); ok {
		json.Unmarshal([]byte(v), &lq.marker) // validated
		if ts, ok := lq.marker["create_timestamp"]; ok {
			ms, _ := timestampMillis(jsString(ts))
			lq.marker["create_timestamp"] = float64(ms)
		}
	}
	lq.fields, _ = p.get("fields")
	if s, _ := p.get("sort"); s != "" {
		parts := strings.Split(s, ".")
		key, order := parts[0], ""
		if key == "ram" {
			key = "max_physical_memory"
		}
		if len(parts) > 1 {
			order = strings.ToUpper(parts[1])
		}
		lq.sort = append(lq.sort, sortOption{key, order})
	}
	if len(lq.sort) == 0 || lq.sort[0].key != "uuid" {
		lq.sort = append(lq.sort, sortOption{"uuid", "DESC"})
	}
	return lq
}

// unsupported names a valid parameter the mock does not evaluate, which it
// answers with 501 rather than with a listing that ignores it.
func (lq *listQuery) unsupported() string {
	for _, name := range []string{"predicate", "query"} {
		if v, _ := lq.p.get(name); v != "" {
			return name
		}
	}
	return ""
}

// listVMs serves GET /vms: validated as VMAPI validates it, filtered,
// sorted and paged as VMAPI's moray layer does; the number of matches
// (marker, offset and limit aside) goes in x-joyent-resource-count.
func (c *Cloud) listVMs(w http.ResponseWriter, r *http.Request) {
	p := parseParams(r.URL.RawQuery)
	if ref := validateListVms(p); ref != nil {
		c.refuse(w, r, ref)
		return
	}
	lq := newListQuery(p)
	if name := lq.unsupported(); name != "" {
		writeError(w, http.StatusNotImplemented, "NotImplemented", "mockcloud does not evaluate "+name)
		return
	}
	if lq.marker != nil && lq.sort[0].order == "" {
		// VMAPI asserts that every sort option has an order before it
		// builds the marker's filter, and fails.
		writeError(w, http.StatusInternalServerError, "InternalError", "sortOption.order must be a string")
		return
	}
	page, count := c.pageLocked(lq)
	w.Header().Set("x-joyent-resource-count", strconv.Itoa(count))
	if lq.fields != "" {
		picked := make([]map[string]any, len(page))
		for i := range page {
			picked[i] = pickFields(page[i], lq.fields)
		}
		writeJSON(w, http.StatusOK, picked)
		return
	}
	writeVMs(w, http.StatusOK, page)
}

// pageLocked returns copies of the VMs of one listing page and how many
// VMs match the query in all. It takes mu.
func (c *Cloud) pageLocked(lq listQuery) ([]VM, int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	var matched []*VM
	for _, id := range c.sortedLocked() {
		if v := c.vms[id]; lq.matches(v) {
			matched = append(matched, v)
		}
	}
	lq.order(matched)
	page := []VM{}
	skipped := 0
	for _, v := range matched {
		if len(page) == lq.limit {
			break
		}
		if !lq.afterMarker(v) {
			continue
		}
		if skipped < lq.offset {
			skipped++
			continue
		}
		page = append(page, cloneVM(*v))
	}
	return page, len(matched)
}

// order sorts vms, given in ascending uuid order, by the sort options.
func (lq *listQuery) order(vms []*VM) {
	if lq.sort[0].key == "uuid" {
		if lq.sort[0].order == "DESC" {
			slices.Reverse(vms)
		}
		return
	}
	slices.SortStableFunc(vms, func(a, b *VM) int {
		for _, o := range lq.sort {
			n := compareValues(vmValue(a, o.key), vmValue(b, o.key))
			if o.order == "DESC" {
				n = -n
			}
			if n != 0 {
				return n
			}
		}
		return 0
	})
}

// afterMarker is VMAPI's marker filter: for each key of the marker, the
// VM's value is at most (descending order, the default for a key not
// sorted on) or at least (ascending) the marker's; the VM the marker
// names is left out.
func (lq *listQuery) afterMarker(v *VM) bool {
	if lq.marker == nil {
		return true
	}
	if id, ok := lq.marker["uuid"].(string); ok && id == v.UUID {
		return false
	}
	for k, mv := range lq.marker {
		order := "DESC"
		for _, o := range lq.sort {
			if o.key == k {
				order = o.order
			}
		}
		n := compareValues(vmValue(v, k), mv)
		if order == "DESC" && n > 0 || order != "DESC" && n < 0 {
			return false
		}
	}
	return true
}

// getVM serves GET /vms/:uuid; destroyed VMs are still found. GetVm
// checks the uuid and owner_uuid (validateGetVm) and nothing else: it
// renders the fields named, and a name the VM lacks is left out.
func (c *Cloud) getVM(w http.ResponseWriter, r *http.Request) {
	uuid := r.PathValue("uuid")
	p := parseParams(r.URL.RawQuery)
	if ref := validateGetVm(uuid, p); ref != nil {
		c.refuse(w, r, ref)
		return
	}
	v, ok := c.VM(uuid)
	if owner, _ := p.get("owner_uuid"); !ok || owner != "" && owner != v.OwnerUUID {
		writeError(w, http.StatusNotFound, "ResourceNotFound", "VM not found")
		return
	}
	if f, _ := p.get("fields"); f != "" {
		writeJSON(w, http.StatusOK, pickFields(v, f))
		return
	}
	writeJSON(w, http.StatusOK, v)
}
