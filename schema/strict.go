package schema

import "github.com/santhosh-tekuri/jsonschema/v5"

// strict rejects the first key, in file order, that the schema does not
// define in an object that allows only the keys it defines.
func strict(v any) error {
	return strictAt(v, root(), nil)
}

func strictAt(v any, s *jsonschema.Schema, at loc) error {
	if s == nil {
		return nil
	}
	switch c := v.(type) {
	case *object:
		for _, k := range c.keys {
			sub := property(s, k)
			if sub == nil && closed(s) {
				return invalid(pathOf(at), "unknown key %q", k)
			}
			if sub == nil {
				sub = additional(s)
			}
			if err := strictAt(c.vals[k], sub, at.key(k)); err != nil {
				return err
			}
		}
	case []any:
		for i, e := range c {
			if err := strictAt(e, items(s), at.at(i)); err != nil {
				return err
			}
		}
	}
	return nil
}
