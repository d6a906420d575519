package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
)

// obj is a JSON object that keeps its keys in the order they were
// written: the order of forward_zones means something (it breaks ties
// between PTR targets), and an operator's file should change only where
// they asked.
type obj struct {
	keys []string
	m    map[string]any // values: *obj, []any, json.Number, string, bool, nil
}

func newObj() *obj { return &obj{m: map[string]any{}} }

func (o *obj) get(k string) (any, bool) { v, ok := o.m[k]; return v, ok }

// set replaces k's value in place, or adds k at the end.
func (o *obj) set(k string, v any) {
	if _, ok := o.m[k]; !ok {
		o.keys = append(o.keys, k)
	}
	o.m[k] = v
}

func (o *obj) del(k string) bool {
	if _, ok := o.m[k]; !ok {
		return false
	}
	delete(o.m, k)
	for i, x := range o.keys {
		if x == k {
			o.keys = append(o.keys[:i], o.keys[i+1:]...)
			break
		}
	}
	return true
}

// rename gives old's value the name new, at old's place.
func (o *obj) rename(old, new string) {
	for i, x := range o.keys {
		if x == old {
			o.keys[i] = new
		}
	}
	o.m[new] = o.m[old]
	delete(o.m, old)
}

// child returns the object at k, creating it when create is set.
func (o *obj) child(k string, create bool) (*obj, error) {
	v, ok := o.m[k]
	if !ok {
		if !create {
			return nil, fmt.Errorf("no %q", k)
		}
		c := newObj()
		o.set(k, c)
		return c, nil
	}
	c, isObj := v.(*obj)
	if !isObj {
		return nil, fmt.Errorf("%q is not an object", k)
	}
	return c, nil
}

// parseObj reads a JSON document whose top level is an object.
func parseObj(data []byte) (*obj, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	v, err := parseValue(dec)
	if err != nil {
		return nil, err
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return nil, errors.New("data after the top-level object")
	}
	o, ok := v.(*obj)
	if !ok {
		return nil, errors.New("the top level is not an object")
	}
	return o, nil
}

func parseValue(dec *json.Decoder) (any, error) {
	tok, err := dec.Token()
	if err != nil {
		return nil, err
	}
	switch t := tok.(type) {
	case json.Delim:
		switch t {
		case '{':
			o := newObj()
			for dec.More() {
				kt, err := dec.Token()
				if err != nil {
					return nil, err
				}
				v, err := parseValue(dec)
				if err != nil {
					return nil, err
				}
				o.set(kt.(string), v)
			}
			_, err := dec.Token()
			return o, err
		case '[':
			a := []any{}
			for dec.More() {
				v, err := parseValue(dec)
				if err != nil {
					return nil, err
				}
				a = append(a, v)
			}
			_, err := dec.Token()
			return a, err
		}
		return nil, fmt.Errorf("unexpected %v", t)
	}
	return tok, nil
}

// marshal writes v as indented JSON, objects in their key order.
func marshal(v any) []byte {
	var b bytes.Buffer
	writeValue(&b, v, "")
	b.WriteByte('\n')
	return b.Bytes()
}

func writeValue(b *bytes.Buffer, v any, indent string) {
	switch t := v.(type) {
	case *obj:
		if len(t.keys) == 0 {
			b.WriteString("{}")
			return
		}
		b.WriteString("{\n")
		for i, k := range t.keys {
			kb, _ := json.Marshal(k)
			b.WriteString(indent + "  " + string(kb) + ": ")
			writeValue(b, t.m[k], indent+"  ")
			if i < len(t.keys)-1 {
				b.WriteByte(',')
			}
			b.WriteByte('\n')
		}
		b.WriteString(indent + "}")
	case []any:
		parts := make([]string, len(t))
		for i, x := range t {
			var pb bytes.Buffer
			writeValue(&pb, x, indent+"  ")
			parts[i] = pb.String()
		}
		b.WriteString("[" + strings.Join(parts, ", ") + "]")
	default:
		vb, _ := json.Marshal(t)
		b.Write(vb)
	}
}
