package mockcloud

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"reflect"
	"slices"
	"strings"
	"sync"
)

// Extra holds the keys of an API object that mockcloud does not model,
// each with its JSON exactly as it came. A dump of a real cloud carries
// dozens of them per VM (cpu_cap, datasets, zfs_*, disks, …); they are
// sent back with the object so that a client sees what the real service
// sends. An Extra is never changed in place once loaded: copies of an
// object share it, and a change replaces it whole.
type Extra map[string]json.RawMessage

// knownKeys caches, per struct type, the JSON names of its fields.
var knownKeys sync.Map // reflect.Type → map[string]bool

// fieldNames returns the JSON names of t's fields (a struct type).
func fieldNames(t reflect.Type) map[string]bool {
	if m, ok := knownKeys.Load(t); ok {
		return m.(map[string]bool)
	}
	m := map[string]bool{}
	for i := range t.NumField() {
		f := t.Field(i)
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if name != "-" && f.IsExported() {
			m[name] = true
		}
	}
	knownKeys.Store(t, m)
	return m
}

// decodeExtra decodes b into typed (a pointer to a struct whose fields
// are the modelled keys) and returns the other keys. A modelled key of the
// wrong type is an error; any other key is kept whatever it holds.
func decodeExtra(b []byte, typed any) (Extra, error) {
	if err := json.Unmarshal(b, typed); err != nil {
		return nil, err
	}
	var all map[string]json.RawMessage
	if err := json.Unmarshal(b, &all); err != nil || all == nil {
		return nil, err // null: nothing to keep
	}
	known := fieldNames(reflect.TypeOf(typed).Elem())
	maps.DeleteFunc(all, func(k string, _ json.RawMessage) bool { return known[k] })
	if len(all) == 0 {
		return nil, nil
	}
	for k, v := range all {
		var buf bytes.Buffer
		json.Compact(&buf, v) // valid: it came out of a decoded object
		all[k] = buf.Bytes()
	}
	return all, nil
}

// encodeExtra encodes typed (a struct without methods) followed by the
// extra keys, sorted so that the same object always reads the same.
func encodeExtra(typed any, extra Extra) ([]byte, error) {
	b, err := json.Marshal(typed)
	if err != nil || len(extra) == 0 {
		return b, err
	}
	b = bytes.TrimSuffix(b, []byte("}"))
	for _, k := range slices.Sorted(maps.Keys(extra)) {
		if len(b) > 1 {
			b = append(b, ',')
		}
		name, _ := json.Marshal(k) // a string always encodes
		b = append(append(append(b, name...), ':'), extra[k]...)
	}
	return append(b, '}'), nil
}

// without returns e less the keys that typed (a struct) models, so that
// an object derived from another never sends a key twice.
func (e Extra) without(typed any) Extra {
	known := fieldNames(reflect.TypeOf(typed))
	var out Extra
	for k, v := range e {
		if !known[k] {
			if out == nil {
				out = Extra{}
			}
			out[k] = v
		}
	}
	return out
}

// check refuses an Extra that was not decoded (one built in Go) whose
// values are not JSON: they are sent without being looked at again.
func (e Extra) check() error {
	for k, v := range e {
		if !json.Valid(v) {
			return fmt.Errorf("extra key %q: not JSON", k)
		}
	}
	return nil
}

// count adds the number of extra keys to n[kind], for the load log.
func (e Extra) count(n map[string]int, kind string) {
	if len(e) > 0 {
		n[kind] += len(e)
	}
}

// errIn names the object an error is about.
func errIn(kind, id string, err error) error {
	if err == nil {
		return nil
	}
	if id == "" {
		return fmt.Errorf("%s: %w", kind, err)
	}
	return fmt.Errorf("%s %s: %w", kind, id, err)
}
