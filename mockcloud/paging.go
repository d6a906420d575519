package mockcloud

import (
	"net/http"
	"net/url"
)

// pageLimit is CNAPI's and NAPI's largest page, and their default.
const pageLimit = 1000

// pageOf reads limit and offset as CNAPI and NAPI take them: limit in
// 1–1000 (default 1000), offset from 0. A bad value is answered with 400
// InvalidParameters and ok false.
func pageOf(w http.ResponseWriter, q url.Values) (limit, offset int, ok bool) {
	var errs []fieldError
	bad := func(field, msg string) { errs = append(errs, fieldError{field, "Invalid", msg}) }
	limit = intParam(q, "limit", pageLimit, 1, pageLimit, bad)
	offset = intParam(q, "offset", 0, 0, 1<<31, bad)
	if len(errs) > 0 {
		writeJSON(w, http.StatusBadRequest, apiError{Code: "InvalidParameters", Message: "Invalid parameters", Errors: errs})
		return 0, 0, false
	}
	return limit, offset, true
}

// page cuts items[offset:offset+limit], clamped to items.
func page[T any](items []T, limit, offset int) []T {
	if offset >= len(items) {
		return items[:0]
	}
	return items[offset:min(len(items), offset+limit)]
}
