package mockcloud

import (
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
)

// VMAPI's predicate rule: createValidateJSONPredicateFn (sdc-vmapi
// lib/common/validation.js) over predValidateSyntax (lib/common/predicate.js).

// syntaxError is a predicate syntax error worded as VMAPI words it, full
// stops included.
type syntaxError string

func (e syntaxError) Error() string { return string(e) }

func syntaxErrorf(format string, args ...any) error {
	return syntaxError(fmt.Sprintf(format, args...))
}

var (
	predRelations = []string{"lt", "le", "gt", "ge", "eq", "ne"}
	predLogicals  = []string{"and", "or"}
)

// vmapiPredicate checks a predicate parameter: JSON, not empty, and of
// the predicate grammar. An empty parameter is not checked at all.
func vmapiPredicate(p params) []fieldError {
	s, _ := p.get("predicate")
	if s == "" {
		return nil
	}
	var pred any
	if err := json.Unmarshal([]byte(s), &pred); err != nil {
		return []fieldError{vmapiInvalid("predicate", "Unable to parse predicate as JSON")}
	}
	var errs []fieldError
	if len(jsKeys(pred)) == 0 {
		errs = append(errs, vmapiInvalid("predicate", "Empty predicate"))
	}
	if err := predValidateSyntax(pred); err != nil {
		errs = append(errs, vmapiInvalid("predicate", "Predicate syntax error: Error: "+err.Error()))
	}
	return errs
}

// jsKeys is JavaScript's own enumerable keys of a decoded JSON value: an
// object's names, an array's (or a string's) indices.
func jsKeys(v any) []string {
	var keys []string
	switch t := v.(type) {
	case map[string]any:
		for k := range t {
			keys = append(keys, k)
		}
	case []any:
		for i := range t {
			keys = append(keys, strconv.Itoa(i))
		}
	case string:
		for i := range []rune(t) {
			keys = append(keys, strconv.Itoa(i))
		}
	}
	return keys
}

// jsIndex is v[key] of an object or array.
func jsIndex(v any, key string) any {
	switch t := v.(type) {
	case map[string]any:
		return t[key]
	case []any:
		i, _ := strconv.Atoi(key)
		return t[i]
	}
	return nil
}

// predValidateSyntax: an object (arrays count) with exactly one key, a
// relation or a logical operator, whose value is well formed.
func predValidateSyntax(pred any) error {
	switch pred.(type) {
	case map[string]any, []any:
	default:
		return syntaxError("predicate must be an object")
	}
	keys := jsKeys(pred)
	if len(keys) > 1 {
		return syntaxErrorf("found too many keys: %d. expected one", len(keys))
	}
	if len(keys) == 0 {
		return syntaxError("predicate is missing a key")
	}
	key := keys[0]
	val := jsIndex(pred, key)
	switch {
	case slices.Contains(predRelations, key):
		return predValidateRel(val, key)
	case slices.Contains(predLogicals, key):
		return predValidateLog(val, key)
	}
	return syntaxErrorf("invalid key: %s", key)
}

// jsTruthy is JavaScript's truthiness of a decoded JSON value.
func jsTruthy(v any) bool {
	switch t := v.(type) {
	case nil:
		return false
	case bool:
		return t
	case float64:
		return t != 0
	case string:
		return t != ""
	}
	return true
}

func predValidateRel(val any, key string) error {
	if !jsTruthy(val) {
		return syntaxErrorf("predicate is missing key %s", jsonText(key))
	}
	arr, ok := val.([]any)
	if !ok {
		return syntaxError("predicate key does not point to an array")
	}
	if len(arr) != 2 {
		return syntaxErrorf("predicate key does not point to an array of two elements: found %d elements", len(arr))
	}
	if _, ok := arr[0].(string); !ok {
		return syntaxErrorf("predicate field is not a string: got %s.", jsonText(arr[0]))
	}
	switch arr[1].(type) {
	case string, float64, bool:
		return nil
	}
	return syntaxErrorf("predicate constant is not a constant: got %s.", jsonText(arr[1]))
}

func predValidateLog(val any, key string) error {
	if !jsTruthy(val) {
		return syntaxErrorf("logical expr is missing key %s", jsonText(key))
	}
	arr, ok := val.([]any)
	if !ok {
		return syntaxError("logical expr key does not point to an array")
	}
	if len(arr) < 2 {
		return syntaxErrorf(`logical expr key "%s" does not contain enough elements: found %d, expected at least two`, key, len(arr))
	}
	for _, sub := range arr {
		if err := predValidateSyntax(sub); err != nil {
			return err
		}
	}
	return nil
}
