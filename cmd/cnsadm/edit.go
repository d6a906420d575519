package main

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
)

// edit is one "field=value", "field+=a,b" or "field-=a" argument.
type edit struct {
	path  []string // dotted field name
	op    string   // "=", "+=" or "-="
	value string
}

func parseEdit(s string) (edit, error) {
	i := strings.Index(s, "=")
	if i <= 0 {
		return edit{}, fmt.Errorf("%q is not field=value, field+=a,b or field-=a", s)
	}
	e := edit{op: "=", value: s[i+1:]}
	field := s[:i]
	if strings.HasSuffix(field, "+") || strings.HasSuffix(field, "-") {
		e.op, field = field[len(field)-1:]+"=", field[:len(field)-1]
	}
	if field == "" {
		return edit{}, fmt.Errorf("%q names no field", s)
	}
	e.path = strings.Split(field, ".")
	return e, nil
}

// listFields are the fields whose values are lists, given comma-separated.
var listFields = []string{"networks", "peers", "slaves", "allow_transfer", "listen", "subResources"}

// apply makes the edit to o: a list field takes a comma-separated list
// (+= adds the items it lacks, -= removes items it has), any other field
// a JSON scalar (true, 30, "x") or else the text as a string.
func (e edit) apply(o *obj) error {
	parent := o
	for _, k := range e.path[:len(e.path)-1] {
		c, err := parent.child(k, true)
		if err != nil {
			return fmt.Errorf("%s: %w", strings.Join(e.path, "."), err)
		}
		parent = c
	}
	name := e.path[len(e.path)-1]
	cur, exists := parent.get(name)
	if _, isObj := cur.(*obj); isObj {
		return fmt.Errorf("%s is an object: edit its fields (%s.FIELD=...)", strings.Join(e.path, "."), strings.Join(e.path, "."))
	}
	_, isList := cur.([]any)
	if !exists {
		isList = slices.Contains(listFields, name)
	}
	if !isList {
		if e.op != "=" {
			return fmt.Errorf("%s is not a list: use %s=VALUE", strings.Join(e.path, "."), strings.Join(e.path, "."))
		}
		parent.set(name, scalar(e.value))
		return nil
	}
	items := splitList(e.value)
	switch e.op {
	case "=":
		parent.set(name, toAny(items))
	case "+=":
		list, _ := cur.([]any)
		for _, it := range items {
			if !slices.Contains(list, any(it)) {
				list = append(list, it)
			}
		}
		parent.set(name, list)
	case "-=":
		list, _ := cur.([]any)
		for _, it := range items {
			i := slices.Index(list, any(it))
			if i < 0 {
				return fmt.Errorf("%s does not contain %q", strings.Join(e.path, "."), it)
			}
			list = slices.Delete(list, i, i+1)
		}
		parent.set(name, list)
	}
	return nil
}

func splitList(s string) []string {
	var out []string
	for _, p := range strings.Split(s, ",") {
		if p = strings.TrimSpace(p); p != "" {
			out = append(out, p)
		}
	}
	return out
}

func toAny(s []string) []any {
	out := make([]any, len(s))
	for i, x := range s {
		out[i] = x
	}
	return out
}

// scalar reads a value as a JSON scalar when it is one, else as a string.
func scalar(s string) any {
	var v any
	dec := json.NewDecoder(strings.NewReader(s))
	dec.UseNumber()
	if err := dec.Decode(&v); err == nil && !dec.More() {
		switch v.(type) {
		case string, bool, json.Number, nil:
			return v
		}
	}
	return s
}
