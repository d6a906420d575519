package schema

import "github.com/santhosh-tekuri/jsonschema/v5"

// strict rejects the first key, in file order, that the schema does not
// define in an object that allows only the keys it defines.
func strict(v any) error {
	var errs Errors
	strictAt(v, root(), nil, &errs)
	return errs.err()
}

// strictAt appends to errs an error for every unknown key under v.
func strictAt(v any, s *jsonschema.Schema, at loc, errs *Errors) {
	if s == nil {
		return
	}
	switch c := v.(type) {
	case *object:
		for _, k := range c.keys {
			sub := property(s, k)
			if sub == nil && closed(s) {
				*errs = append(*errs, invalid(pathOf(at), "unknown key %q", k))
				continue
			}
			if sub == nil {
				sub = additional(s)
			}
			strictAt(c.vals[k], sub, at.key(k), errs)
		}
	case []any:
		for i, e := range c {
			strictAt(e, items(s), at.at(i), errs)
		}
	}
}
