package mockcloud

import (
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode"
)

// VMAPI's value rules that take more than a regexp: numbers, timestamps,
// markers (sdc-vmapi lib/common/marker.js) and sort criteria
// (lib/validation/sort.js).

// vmapiSortKeys is VALID_SORT_KEYS.
var vmapiSortKeys = []string{"uuid", "owner_uuid", "image_uuid", "billing_id", "server_uuid", "tags",
	"brand", "state", "alias", "max_physical_memory", "create_timestamp", "docker"}

// vmapiNumber is createValidateNumberFn over validNumber: parseInt of the
// value must lie in [min, max] (max < 0: no maximum). VMAPI then uses
// Number of the value, and fails inside on one that parseInt accepts and
// Number does not ("10abc", "1.5"); the mock refuses those with the
// check's own answer.
func vmapiNumber(name string, min, max int) vmapiCheck {
	return func(p params) []fieldError {
		v, ok := p.get(name)
		if !ok {
			return nil
		}
		n, isNum := jsParseInt(v)
		within := isNum && n >= float64(min) && (max < 0 || n <= float64(max))
		whole, isWhole := jsNumber(v)
		if within && isWhole && whole == math.Trunc(whole) {
			return nil
		}
		msg := fmt.Sprintf("Not a valid number: number must be >= %d", min)
		if max >= 0 {
			msg += fmt.Sprintf(" and <= %d", max)
		}
		return []fieldError{vmapiInvalid(name, msg)}
	}
}

// jsParseInt is JavaScript's parseInt(s, 10): leading white space, a sign
// and the longest run of digits; no digits is NaN (false).
func jsParseInt(s string) (float64, bool) {
	s = strings.TrimLeftFunc(s, unicode.IsSpace)
	neg := false
	if len(s) > 0 && (s[0] == '+' || s[0] == '-') {
		neg, s = s[0] == '-', s[1:]
	}
	end := strings.IndexFunc(s, func(r rune) bool { return r < '0' || r > '9' })
	if end < 0 {
		end = len(s)
	}
	if end == 0 {
		return 0, false
	}
	n, _ := strconv.ParseFloat(s[:end], 64)
	if neg {
		n = -n
	}
	return n, true
}

// jsNumber is JavaScript's Number(s) for decimal text: white space around
// it is ignored and the empty string is 0.
func jsNumber(s string) (float64, bool) {
	s = strings.TrimSpace(s)
	if s == "" {
		return 0, true
	}
	if strings.ContainsAny(s, "_xXpP") || strings.EqualFold(strings.TrimLeft(s, "+-"), "inf") ||
		strings.EqualFold(strings.TrimLeft(s, "+-"), "infinity") || strings.EqualFold(s, "nan") {
		return 0, false
	}
	n, err := strconv.ParseFloat(s, 64)
	return n, err == nil
}

// vmapiOffsetSet reports whether offset is set to a number other than 0:
// VMAPI's conflict check reads the converted number, so offset=0 passes.
func vmapiOffsetSet(p params) bool {
	v, ok := p.get("offset")
	n, isNum := jsNumber(v)
	return ok && isNum && n != 0
}

// vmapiMarkerSet reports whether marker parses to an object (JSON null
// parses to no marker at all).
func vmapiMarkerSet(p params) bool {
	v, ok := p.get("marker")
	if !ok {
		return false
	}
	var m map[string]any
	return json.Unmarshal([]byte(v), &m) == nil && m != nil
}

// vmapiTimestamp is createValidateTimestampFn: an ISO 8601 date or a
// number of milliseconds (JavaScript's Date, approximated by the formats
// Triton sends).
func vmapiTimestamp(name string) vmapiCheck {
	return func(p params) []fieldError {
		if v, ok := p.get(name); ok {
			if _, valid := timestampMillis(v); !valid {
				return []fieldError{vmapiInvalid(name, "Invalid timestamp: "+v)}
			}
		}
		return nil
	}
}

// timestampMillis reads a timestamp as VMAPI converts it: milliseconds
// since the epoch.
func timestampMillis(s string) (int64, bool) {
	if n, ok := jsNumber(s); ok && math.Abs(n) <= 8.64e15 {
		return int64(n), true
	}
	for _, layout := range []string{time.RFC3339Nano, "2006-01-02T15:04:05", "2006-01-02T15:04", "2006-01-02"} {
		if t, err := time.Parse(layout, s); err == nil {
			return t.UnixMilli(), true
		}
	}
	return 0, false
}

// vmapiSortValid is isValidSortCriteria: "" or key[.order], the key one
// of VALID_SORT_KEYS and the order ASC or DESC in any case. Parts after a
// second dot are not read.
func vmapiSortValid(s string) bool {
	if s == "" {
		return true
	}
	parts := strings.Split(s, ".")
	if !slices.Contains(vmapiSortKeys, parts[0]) {
		return false
	}
	return len(parts) < 2 || strings.EqualFold(parts[1], "ASC") || strings.EqualFold(parts[1], "DESC")
}

func vmapiSort(p params) []fieldError {
	if v, ok := p.get("sort"); ok && !vmapiSortValid(v) {
		return []fieldError{vmapiInvalid("sort", "Invalid sort param: "+v)}
	}
	return nil
}

// vmapiMarker is createValidateMarkerFn: the marker must parse
// (parseMarkerJSONString) and then agree with sort (validateMarker). The
// reason after a JSON syntax error is Go's, not V8's.
func vmapiMarker(p params) []fieldError {
	s, ok := p.get("marker")
	if !ok {
		return nil
	}
	var msgs []string
	var raw any
	if err := json.Unmarshal([]byte(s), &raw); err != nil {
		msgs = append(msgs, "Could not parse marker as an object JSON representation, reason: "+err.Error())
	} else if raw != nil {
		if m, isObj := raw.(map[string]any); !isObj {
			msgs = append(msgs, "Marker must represent an object.")
		} else if ts, has := m["create_timestamp"]; has && !markerTimestampValid(ts) {
			msgs = append(msgs, "Marker has an invalid create_timestamp field: "+jsString(ts))
		} else {
			sort, sorted := p.get("sort")
			msgs = append(msgs, markerProblems(m, sort, sorted)...)
		}
	}
	var errs []fieldError
	for _, msg := range msgs {
		errs = append(errs, vmapiInvalid("marker", "Invalid marker: "+s+". "+msg))
	}
	return errs
}

// markerTimestampValid: jsprim.parseDateTime takes a number, a string of
// digits or a date string.
func markerTimestampValid(v any) bool {
	switch t := v.(type) {
	case float64:
		return math.Abs(t) <= 8.64e15
	case string:
		_, ok := timestampMillis(t)
		return ok
	}
	return false
}

// markerProblems is validateMarker: the marker names uuid; with a sort,
// it names the sort key; and every key but uuid is the sort key (with no
// sort, "undefined" in the message).
func markerProblems(m map[string]any, sort string, sorted bool) []string {
	var out []string
	if _, ok := m["uuid"]; !ok {
		out = append(out, "A marker needs to have a uuid property from which a strict total order can be established")
	}
	sortText := "undefined"
	if sorted {
		sortText = sort
		if _, ok := m[strings.Split(sort, ".")[0]]; !ok {
			out = append(out, "All sort fields must be present in marker. Sort fields: "+sort+".")
		}
	}
	key := strings.Split(sort, ".")[0]
	allInSort := vmapiSortValid(sort)
	for k := range m {
		if k != "uuid" && k != key {
			allInSort = false
		}
	}
	if !allInSort {
		out = append(out, "All marker keys except uuid must be present in the sort parameter. Sort fields: "+sortText+".")
	}
	return out
}

// jsString is String(v) of a decoded JSON value.
func jsString(v any) string {
	switch t := v.(type) {
	case string:
		return t
	case nil:
		return "null"
	case bool, float64:
		return fmt.Sprint(t)
	case []any:
		parts := make([]string, len(t))
		for i, e := range t {
			parts[i] = jsString(e)
		}
		return strings.Join(parts, ",")
	}
	return "[object Object]"
}
