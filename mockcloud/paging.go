package mockcloud

import "strconv"

// pageLimit is CNAPI's and NAPI's largest page, and their default.
const pageLimit = 1000

// pageBounds reads the limit and offset of a CNAPI or NAPI list query
// that passed its service's validation (default: 1000 from 0).
func pageBounds(p params) (limit, offset int) {
	limit = pageLimit
	if v, ok := p.get("limit"); ok {
		limit, _ = strconv.Atoi(v)
	}
	if v, ok := p.get("offset"); ok {
		offset, _ = strconv.Atoi(v)
	}
	return limit, max(offset, 0)
}

// page cuts items[offset:offset+limit], clamped to items.
func page[T any](items []T, limit, offset int) []T {
	if offset >= len(items) {
		return items[:0]
	}
	return items[offset:min(len(items), offset+limit)]
}
