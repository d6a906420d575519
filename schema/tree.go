package schema

import "encoding/json"

// object is a decoded JSON object that remembers the order of its keys.
// Values in a decoded tree are nil, bool, json.Number, string, []any and
// *object.
type object struct {
	keys []string
	vals map[string]any
}

func newObject() *object { return &object{vals: map[string]any{}} }

// get returns the value of key k.
func (o *object) get(k string) (any, bool) {
	v, ok := o.vals[k]
	return v, ok
}

// has reports whether key k is set.
func (o *object) has(k string) bool {
	_, ok := o.vals[k]
	return ok
}

// set adds key k at the end, or replaces its value in place.
func (o *object) set(k string, v any) {
	if _, ok := o.vals[k]; !ok {
		o.keys = append(o.keys, k)
	}
	o.vals[k] = v
}

// rename gives key from the name to, keeping its position. The caller
// makes sure that to is not set.
func (o *object) rename(from, to string) {
	v, ok := o.vals[from]
	if !ok {
		return
	}
	for i, k := range o.keys {
		if k == from {
			o.keys[i] = to
		}
	}
	delete(o.vals, from)
	o.vals[to] = v
}

// plain converts a decoded tree to the types the JSON schema validator
// and encoding/json expect: *object becomes map[string]any.
func plain(v any) any {
	switch v := v.(type) {
	case *object:
		m := make(map[string]any, len(v.keys))
		for _, k := range v.keys {
			m[k] = plain(v.vals[k])
		}
		return m
	case []any:
		a := make([]any, len(v))
		for i, e := range v {
			a[i] = plain(e)
		}
		return a
	}
	return v
}

// seg is one step of a location in a decoded tree: an array index when
// index >= 0, an object key otherwise.
type seg struct {
	key   string
	index int
}

// loc is the location of a value in a decoded tree.
type loc []seg

// key returns l extended by object key k.
func (l loc) key(k string) loc { return append(l[:len(l):len(l)], seg{key: k, index: -1}) }

// at returns l extended by array index i.
func (l loc) at(i int) loc { return append(l[:len(l):len(l)], seg{index: i}) }

// lookup returns the value at l in tree v.
func lookup(v any, l loc) (any, bool) {
	for _, s := range l {
		switch c := v.(type) {
		case *object:
			if s.index >= 0 {
				return nil, false
			}
			var ok bool
			if v, ok = c.get(s.key); !ok {
				return nil, false
			}
		case []any:
			if s.index < 0 || s.index >= len(c) {
				return nil, false
			}
			v = c[s.index]
		default:
			return nil, false
		}
	}
	return v, true
}

// number reports whether n is a number cnsd accepts: at most 32
// characters, an exponent under 1000 and within float64 range. The
// bound keeps exact arithmetic on numbers cheap.
func number(n json.Number) bool {
	s := string(n)
	if len(s) > 32 {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] == 'e' || s[i] == 'E' {
			e := s[i+1:]
			if len(e) > 0 && (e[0] == '+' || e[0] == '-') {
				e = e[1:]
			}
			if len(e) > 3 {
				return false
			}
		}
	}
	_, err := n.Float64()
	return err == nil
}
