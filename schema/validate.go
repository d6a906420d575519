package schema

import (
	"cmp"
	"errors"
	"slices"
	"strconv"
	"strings"

	"github.com/santhosh-tekuri/jsonschema/v5"
)

// validate checks tree v against the schema and reports every failure,
// one per value, in file order: an *Error when there is one, an *Errors
// when there are several.
func (c *compiledSchema) validate(v any) error {
	err := c.root.Validate(plain(v))
	if err == nil {
		return nil
	}
	var ve *jsonschema.ValidationError
	if !errors.As(err, &ve) {
		return &Error{Message: err.Error()}
	}
	leaves := leafErrors(ve, nil)
	order := documentOrder(v, "", map[string]int{})
	slices.SortStableFunc(leaves, func(a, b *jsonschema.ValidationError) int {
		if n := cmp.Compare(order[a.InstanceLocation], order[b.InstanceLocation]); n != 0 {
			return n
		}
		return compareKeywords(a.KeywordLocation, b.KeywordLocation)
	})
	var errs Errors
	for i, e := range leaves {
		// One failure per value: the first of a value's failures (the
		// branches of a oneOf, say) says what is wrong with it.
		if i > 0 && leaves[i-1].InstanceLocation == e.InstanceLocation {
			continue
		}
		errs = append(errs, c.explain(v, e))
	}
	return errs.err()
}

// leafErrors appends the errors of e that have no causes to leaves.
func leafErrors(e *jsonschema.ValidationError, leaves []*jsonschema.ValidationError) []*jsonschema.ValidationError {
	if len(e.Causes) == 0 {
		return append(leaves, e)
	}
	for _, c := range e.Causes {
		leaves = leafErrors(c, leaves)
	}
	return leaves
}

// documentOrder numbers the values of tree v in file order, by JSON
// pointer (the validator's instance locations).
func documentOrder(v any, ptr string, order map[string]int) map[string]int {
	order[ptr] = len(order)
	switch c := v.(type) {
	case *object:
		for _, k := range c.keys {
			documentOrder(c.vals[k], ptr+"/"+escapePointer(k), order)
		}
	case []any:
		for i, e := range c {
			documentOrder(e, ptr+"/"+strconv.Itoa(i), order)
		}
	}
	return order
}

// compareKeywords orders two keyword locations at the same instance: a
// failing property name first (the name comes before its value in the
// file), then by schema position, comparing indexes as numbers.
func compareKeywords(a, b string) int {
	pa, pb := strings.Contains(a, "/propertyNames"), strings.Contains(b, "/propertyNames")
	if pa != pb {
		if pa {
			return -1
		}
		return 1
	}
	sa, sb := strings.Split(a, "/"), strings.Split(b, "/")
	for i := 0; i < len(sa) && i < len(sb); i++ {
		na, errA := strconv.Atoi(sa[i])
		nb, errB := strconv.Atoi(sb[i])
		if errA == nil && errB == nil && na != nb {
			return cmp.Compare(na, nb)
		}
		if n := strings.Compare(sa[i], sb[i]); n != 0 {
			return n
		}
	}
	return cmp.Compare(len(sa), len(sb))
}

// escapePointer escapes a key for a JSON pointer (RFC 6901).
func escapePointer(k string) string {
	return strings.ReplaceAll(strings.ReplaceAll(k, "~", "~0"), "/", "~1")
}

// instanceLoc turns the validator's JSON pointer into a location in tree
// v: a step into an array is an index, any other step a key.
func instanceLoc(v any, ptr string) loc {
	var at loc
	if ptr == "" {
		return at
	}
	for _, s := range strings.Split(ptr[1:], "/") {
		k := strings.ReplaceAll(strings.ReplaceAll(s, "~1", "/"), "~0", "~")
		if a, ok := v.([]any); ok {
			i, _ := strconv.Atoi(k)
			at = at.at(i)
			if i >= 0 && i < len(a) {
				v = a[i]
			}
			continue
		}
		at = at.key(k)
		if o, ok := v.(*object); ok {
			v = o.vals[k]
		}
	}
	return at
}
