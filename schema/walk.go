package schema

import "github.com/santhosh-tekuri/jsonschema/v5"

// The functions below find sub-schemas of the compiled schema by key or
// index. They look through $ref and allOf, which is how the
// configuration schema composes, and accept a nil schema.

// property returns the schema of key k when s defines k by name.
func property(s *jsonschema.Schema, k string) *jsonschema.Schema {
	if s == nil {
		return nil
	}
	if p := s.Properties[k]; p != nil {
		return p
	}
	if p := property(s.Ref, k); p != nil {
		return p
	}
	for _, a := range s.AllOf {
		if p := property(a, k); p != nil {
			return p
		}
	}
	return nil
}

// additional returns the schema of keys s does not define by name: nil
// when any value is allowed or no key is.
func additional(s *jsonschema.Schema) *jsonschema.Schema {
	if s == nil {
		return nil
	}
	if a, ok := s.AdditionalProperties.(*jsonschema.Schema); ok {
		return a
	}
	return additional(s.Ref)
}

// closed reports whether s allows only the keys it defines by name.
func closed(s *jsonschema.Schema) bool {
	if s == nil {
		return false
	}
	if b, ok := s.AdditionalProperties.(bool); ok && !b {
		return true
	}
	return closed(s.Ref)
}

// items returns the schema of the elements of an array.
func items(s *jsonschema.Schema) *jsonschema.Schema {
	if s == nil {
		return nil
	}
	if s.Items2020 != nil {
		return s.Items2020
	}
	if i, ok := s.Items.(*jsonschema.Schema); ok {
		return i
	}
	return items(s.Ref)
}

// root returns the compiled configuration schema, or nil if it does not
// compile (Parse reports that).
func root() *jsonschema.Schema {
	c, err := compiled()
	if err != nil {
		return nil
	}
	return c.root
}

// pathOf renders location l in the style of error messages: keys the
// schema defines by name are fields (.networks), others are entries
// (["dc1.cns.example.com"]).
func pathOf(l loc) path {
	s := root()
	var p path
	for _, sg := range l {
		if sg.index >= 0 {
			p, s = p.index(sg.index), items(s)
			continue
		}
		if sub := property(s, sg.key); sub != nil {
			p, s = p.field(sg.key), sub
			continue
		}
		p, s = p.entry(sg.key), additional(s)
	}
	return p
}
