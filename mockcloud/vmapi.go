package mockcloud

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
)

// maxListLimit is VMAPI's default and largest page size.
const maxListLimit = 1000

// listQuery is a parsed GET /vms query.
type listQuery struct {
	filters map[string]string // state, owner_uuid, server_uuid, uuid, alias
	uuids   []string
	limit   int
	offset  int
	marker  string // uuid of the last VM of the previous page
	asc     bool
	fields  string // the fields parameter, "" for whole VMs
}

// listParams are the GET /vms parameters the mock understands.
var listParams = []string{"state", "owner_uuid", "server_uuid", "uuid", "alias", "uuids",
	"limit", "offset", "marker", "sort", "fields"}

// parseListQuery validates q as VMAPI does: unknown parameters, a limit
// outside 1–1000, a marker that is not a JSON object with a uuid, and
// offset together with marker are all ValidationFailed.
func parseListQuery(q url.Values) (listQuery, []fieldError) {
	lq := listQuery{filters: map[string]string{}, limit: maxListLimit}
	var errs []fieldError
	bad := func(field, msg string) { errs = append(errs, fieldError{field, "Invalid", msg}) }
	for k := range q {
		if !slices.Contains(listParams, k) {
			bad(k, "unsupported parameter")
		}
	}
	for _, k := range []string{"state", "owner_uuid", "server_uuid", "uuid", "alias"} {
		if q.Has(k) {
			lq.filters[k] = q.Get(k)
		}
	}
	if q.Has("fields") {
		lq.fields = q.Get("fields")
		if !validListFields(lq.fields) {
			bad("fields", "Invalid values: "+lq.fields)
		}
	}
	if s := q.Get("uuids"); s != "" {
		lq.uuids = strings.Split(s, ",")
	}
	lq.limit = intParam(q, "limit", maxListLimit, 1, maxListLimit, bad)
	lq.offset = intParam(q, "offset", 0, 0, 1<<31, bad)
	if q.Has("marker") {
		lq.marker = parseMarker(q.Get("marker"), bad)
		if q.Has("offset") {
			bad("offset", "offset and marker cannot be used at the same time")
		}
	}
	switch strings.ToLower(q.Get("sort")) {
	case "", "uuid", "uuid.desc", "desc":
	case "uuid.asc", "asc":
		lq.asc = true
	default:
		bad("sort", "the mock sorts by uuid only")
	}
	return lq, errs
}

// intParam reads an integer parameter in [lo, hi], or def when absent.
func intParam(q url.Values, name string, def, lo, hi int, bad func(field, msg string)) int {
	if !q.Has(name) {
		return def
	}
	n, err := strconv.Atoi(q.Get(name))
	if err != nil || n < lo || n > hi {
		bad(name, fmt.Sprintf("not a number between %d and %d", lo, hi))
	}
	return n
}

// parseMarker returns the uuid of a VMAPI marker, a JSON object naming the
// last VM of the previous page.
func parseMarker(s string, bad func(field, msg string)) string {
	var m struct {
		UUID *string `json:"uuid"`
	}
	if err := json.Unmarshal([]byte(s), &m); err != nil || m.UUID == nil {
		bad("marker", "Invalid marker: "+s)
		return ""
	}
	return *m.UUID
}

// matches applies the filters; state=active is every VM not destroyed
// and not failed.
func (lq *listQuery) matches(v *VM) bool {
	for k, want := range lq.filters {
		var got string
		switch k {
		case "state":
			if want == "active" {
				if v.State == "destroyed" || v.State == "failed" {
					return false
				}
				continue
			}
			got = v.State
		case "owner_uuid":
			got = v.OwnerUUID
		case "server_uuid":
			got = v.ServerUUID
		case "uuid":
			got = v.UUID
		case "alias":
			got = v.Alias
		}
		if got != want {
			return false
		}
	}
	return lq.uuids == nil || slices.Contains(lq.uuids, v.UUID)
}

// listVMs serves GET /vms: sorted by uuid, descending unless sort asks
// otherwise, as VMAPI does so that a marker is the last uuid seen; the
// total number of matches goes in x-joyent-resource-count.
func (c *Cloud) listVMs(w http.ResponseWriter, r *http.Request) {
	lq, errs := parseListQuery(r.URL.Query())
	if errs != nil {
		writeInvalid(w, errs)
		return
	}
	page, count := c.pageLocked(lq)
	if page == nil {
		page = []VM{}
	}
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
	uuids := c.sortedLocked()
	var page []VM
	count, skipped := 0, 0
	for i := range uuids {
		if !lq.asc {
			i = len(uuids) - 1 - i
		}
		v := c.vms[uuids[i]]
		if !lq.matches(v) {
			continue
		}
		count++
		if lq.marker != "" && (lq.asc && v.UUID <= lq.marker || !lq.asc && v.UUID >= lq.marker) {
			continue
		}
		if skipped < lq.offset {
			skipped++
			continue
		}
		if len(page) < lq.limit {
			page = append(page, cloneVM(*v))
		}
	}
	return page, count
}

// getVM serves GET /vms/:uuid; destroyed VMs are still found. GetVm does
// not check its fields parameter: it renders the properties named, and a
// name the VM lacks is left out.
func (c *Cloud) getVM(w http.ResponseWriter, r *http.Request) {
	v, ok := c.VM(r.PathValue("uuid"))
	if !ok {
		writeError(w, http.StatusNotFound, "ResourceNotFound", "VM not found")
		return
	}
	if f := r.URL.Query().Get("fields"); f != "" {
		writeJSON(w, http.StatusOK, pickFields(v, f))
		return
	}
	writeJSON(w, http.StatusOK, v)
}
