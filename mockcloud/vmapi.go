package mockcloud

import (
	"encoding/json"
	"net/http"
	"net/url"
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
	if lq.sort[0].key != "uuid" {
		return c.sortedPageLocked(lq)
	}
	// In uuid order the page is a walk of byUUID from the marker on: a
	// listing in pages then costs the cloud its VMs once, not once per
	// page. Only the count needs every VM (countLocked).
	ids := c.sortedLocked()
	desc := lq.sort[0].order == "DESC"
	i, step := 0, 1
	if desc {
		i, step = len(ids)-1, -1
	}
	if m, ok := lq.marker["uuid"].(string); ok {
		// VMs before the marker's uuid in the walk's order are the ones
		// afterMarker leaves out whatever else they hold.
		if desc {
			i, _ = slices.BinarySearch(ids, m)
			if i < len(ids) && ids[i] == m {
				i++
			}
			i--
		} else {
			i, _ = slices.BinarySearch(ids, m)
		}
	}
	page := []VM{}
	skipped := 0
	for ; i >= 0 && i < len(ids) && len(page) < lq.limit; i += step {
		v := c.vms[ids[i]]
		if !lq.matches(v) || !lq.afterMarker(v) {
			continue
		}
		if skipped < lq.offset {
			skipped++
			continue
		}
		page = append(page, cloneVM(*v))
	}
	return page, c.countLocked(lq)
}

// countLocked is how many VMs match lq's filters, kept per filter until
// a VM changes, so that each page of a listing does not count them all
// again. The caller holds mu.
func (c *Cloud) countLocked(lq listQuery) int {
	key := lq.filterKey()
	if c.counts == nil || c.countsGen != c.vmGen || len(c.counts) >= maxCountsKept {
		c.counts, c.countsGen = map[string]int{}, c.vmGen
	}
	if n, ok := c.counts[key]; ok {
		return n
	}
	n := 0
	for _, v := range c.vms {
		if lq.matches(v) {
			n++
		}
	}
	c.counts[key] = n
	return n
}

// maxCountsKept bounds the counts a cloud keeps between changes: queries
// of many different filters recount rather than grow the map.
const maxCountsKept = 64

// filterKey names the query's filters: every parameter but those that
// only page (limit, offset, marker), in the order sent.
func (lq *listQuery) filterKey() string {
	var b strings.Builder
	for _, name := range lq.p.order {
		switch name {
		case "limit", "offset", "marker":
			continue
		}
		v, _ := lq.p.get(name)
		b.WriteString(url.QueryEscape(name) + "=" + url.QueryEscape(v) + "&")
	}
	return b.String()
}

// sortedPageLocked is pageLocked for a sort on another key than uuid:
// every matching VM is sorted, then paged. The caller holds mu.
func (c *Cloud) sortedPageLocked(lq listQuery) ([]VM, int) {
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
