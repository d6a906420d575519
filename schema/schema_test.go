package schema

import (
	"encoding/json"
	"os"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// rawSchema returns the schema document decoded with numbers kept exact.
func rawSchema(t *testing.T) map[string]any {
	t.Helper()
	c, err := compiled()
	if err != nil {
		t.Fatal(err)
	}
	return c.raw.(map[string]any)
}

// resolve follows a local $ref of node, which is how the schema reuses
// definitions; properties next to the $ref are merged over it.
func resolve(t *testing.T, root, node map[string]any) map[string]any {
	ref, ok := node["$ref"].(string)
	if !ok {
		return node
	}
	def, ok := root["$defs"].(map[string]any)[strings.TrimPrefix(ref, "#/$defs/")].(map[string]any)
	if !ok {
		t.Fatalf("unresolved $ref %s", ref)
	}
	merged := map[string]any{}
	for k, v := range resolve(t, root, def) {
		merged[k] = v
	}
	for k, v := range node {
		merged[k] = v
	}
	return merged
}

// jsonFields returns the fields of struct type typ by JSON name,
// including those of embedded structs.
func jsonFields(typ reflect.Type) map[string]reflect.StructField {
	fields := map[string]reflect.StructField{}
	for f := range typ.Fields() {
		if f.Anonymous {
			for k, v := range jsonFields(f.Type) {
				v.Index = append(slices.Clone(f.Index), v.Index...)
				fields[k] = v
			}
			continue
		}
		fields[strings.Split(f.Tag.Get("json"), ",")[0]] = f
	}
	return fields
}

// TestSchemaMatchesFile walks the schema and the decoding target together:
// every key the schema defines must have a field of a matching kind, and
// every field a key.
func TestSchemaMatchesFile(t *testing.T) {
	root := rawSchema(t)
	matchShape(t, root, root, reflect.TypeFor[file](), "(top)")
}

func matchShape(t *testing.T, root, node map[string]any, typ reflect.Type, at string) {
	node = resolve(t, root, node)
	for typ.Kind() == reflect.Pointer {
		typ = typ.Elem()
	}
	if props, ok := node["properties"].(map[string]any); ok {
		if typ.Kind() != reflect.Struct {
			t.Errorf("%s: schema has properties, Go type is %s", at, typ)
			return
		}
		fields := jsonFields(typ)
		for name, p := range props {
			f, ok := fields[name]
			if !ok {
				t.Errorf("%s: schema key %q has no field", at, name)
				continue
			}
			matchShape(t, root, p.(map[string]any), f.Type, at+"."+name)
		}
		for name := range fields {
			if _, ok := props[name]; !ok {
				t.Errorf("%s: field %q is not in the schema", at, name)
			}
		}
		return
	}
	if add, ok := node["additionalProperties"].(map[string]any); ok {
		if typ.Kind() != reflect.Map {
			t.Errorf("%s: schema has additionalProperties, Go type is %s", at, typ)
			return
		}
		matchShape(t, root, add, typ.Elem(), at+"[]")
		return
	}
	if it, ok := node["items"].(map[string]any); ok {
		if typ.Kind() != reflect.Slice {
			t.Errorf("%s: schema has items, Go type is %s", at, typ)
			return
		}
		matchShape(t, root, it, typ.Elem(), at+"[]")
		return
	}
	matchKind(t, node, typ, at)
}

// matchKind checks a leaf's JSON type against its Go kind.
func matchKind(t *testing.T, node map[string]any, typ reflect.Type, at string) {
	want := map[string][]reflect.Kind{
		"string":  {reflect.String},
		"boolean": {reflect.Bool},
		"integer": {reflect.Int, reflect.Int64},
		"number":  {reflect.Float64},
		"object":  {reflect.Map},
		"array":   {reflect.Slice},
	}
	ty, _ := node["type"].(string)
	if ty == "" && node["enum"] != nil {
		ty = "string"
	}
	if !slices.Contains(want[ty], typ.Kind()) {
		t.Errorf("%s: schema type %q, Go type %s", at, ty, typ)
	}
}

// TestSchemaDefaults checks that every "default" in the schema is the
// value Parse applies.
func TestSchemaDefaults(t *testing.T) {
	root := rawSchema(t)
	// Defaults applied while converting, where defaults() has no value.
	applied := map[string]any{
		".api.listen":              defaultAPIListen,
		".api_server.port":         defaultAPIPort,
		".api.auth":                AuthToken,
		".api.metrics_auth":        AuthToken,
		".api_server.auth":         AuthToken,
		".api_server.metrics_auth": AuthToken,
		".tsig_keys[].algorithm":   defaultAlgorithm,
	}
	var walk func(node map[string]any, v reflect.Value, at string)
	walk = func(node map[string]any, v reflect.Value, at string) {
		node = resolve(t, root, node)
		if d, ok := node["default"]; ok {
			got := any(nil)
			if want, ok := applied[at]; ok {
				got = want
			} else if v.IsValid() {
				got = v.Interface()
			}
			if g, w := compact(t, got), compact(t, d); g != w {
				t.Errorf("%s: schema default %s, Parse applies %s", at, w, g)
			}
		}
		props, _ := node["properties"].(map[string]any)
		for name, p := range props {
			var fv reflect.Value
			if v.IsValid() && v.Kind() == reflect.Pointer && !v.IsNil() {
				v = v.Elem()
			}
			if v.IsValid() && v.Kind() == reflect.Struct {
				if f, ok := jsonFields(v.Type())[name]; ok {
					fv = v.FieldByIndex(f.Index)
				}
			}
			walk(p.(map[string]any), fv, at+"."+name)
		}
		if add, ok := node["additionalProperties"].(map[string]any); ok {
			walk(add, reflect.Value{}, at+"[]")
		}
	}
	walk(root, reflect.ValueOf(defaults()), "")
}

// compact renders v as compact JSON for comparison.
func compact(t *testing.T, v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestHostNamePattern checks that the schema's hostName pattern and
// isHostName, used by the cnsd-host and cnsd-hostmaster formats, agree.
func TestHostNamePattern(t *testing.T) {
	def := rawSchema(t)["$defs"].(map[string]any)["hostName"].(map[string]any)
	re := regexp.MustCompile(def["pattern"].(string))
	long := strings.Repeat("a", 63)
	names := []string{
		"a", "A", "0", "ns1.example.com", "NS1.Example.COM", "a-b.c", "xn--bcher-kva.example",
		long, long + "." + long + "." + long + "." + strings.Repeat("b", 61),
		"", ".", "a.", ".a", "a..b", "-a", "a-", "a_b", "a b", "é.example", long + "a",
		long + "." + long + "." + long + "." + strings.Repeat("b", 62),
	}
	for _, n := range names {
		patternOK := re.MatchString(n) && len(n) <= 253
		if got := isHostName(n); got != patternOK {
			t.Errorf("%q: isHostName = %v, schema pattern = %v", n, got, patternOK)
		}
	}
}

func TestFormats(t *testing.T) {
	tests := []struct {
		format string
		value  any
		ok     bool
	}{
		{"cnsd-hostmaster", "hostmaster@example.com", true},
		{"cnsd-hostmaster", "john.doe@example.com", true},
		{"cnsd-hostmaster", "@example.com", false},
		{"cnsd-hostmaster", "a@b@example.com", false},
		{"cnsd-hostmaster", "a b@example.com", false},
		{"cnsd-hostmaster", "a@example.com.", false},
		{"cnsd-peer", "192.0.2.1", true},
		{"cnsd-peer", "2001:db8::1", true},
		{"cnsd-peer", "ns0.example.com", true},
		{"cnsd-peer", "fe80::1%eth0", false},
		{"cnsd-peer", "ns0.example.com:5353", true},
		{"cnsd-peer", "192.0.2.1:5353", true},
		{"cnsd-peer", "[2001:db8::1]:5353", true},
		{"cnsd-peer", "2001:db8::1:5353", true}, // an address, not a port
		{"cnsd-peer", "192.0.2.1:0", false},
		{"cnsd-peer", "192.0.2.1:65536", false},
		{"cnsd-peer", "ns_0.example.com:53", false},
		{"cnsd-peer", "[ns0.example.com]:x", false},
		{"cnsd-ip", "10.0.0.1", true},
		{"cnsd-ip", "10.0.0.0/8", false},
		{"cnsd-ip-prefix", "10.0.0.0/8", true},
		{"cnsd-ip-prefix", "10.1.2.3/8", true},
		{"cnsd-ip-prefix", "::/0", true},
		{"cnsd-ip-prefix", "2001:db8::1", true},
		{"cnsd-ip-prefix", "10.0.0.0/33", false},
		{"cnsd-ip-prefix", "10.0.0", false},
		{"cnsd-ip-prefix", "fe80::1%eth0", false},
		{"cnsd-ip-prefix", "fe80::1%eth0/64", false},
		{"cnsd-listen", "127.0.0.1:53", true},
		{"cnsd-listen", "[::1]:53", true},
		{"cnsd-listen", ":53", true},
		{"cnsd-listen", "localhost:0", true},
		{"cnsd-listen", "127.0.0.1", false},
		{"cnsd-listen", "127.0.0.1:65536", false},
		{"cnsd-listen", "127.0.0.1:dns", false},
		{"cnsd-redis-url", "redis://127.0.0.1:6379/0", true},
		{"cnsd-redis-url", "rediss://user:pw@redis.example.com", true},
		{"cnsd-redis-url", "unix:///var/run/redis.sock", true},
		{"cnsd-redis-url", "redis://", false},
		{"cnsd-redis-url", "127.0.0.1:6379", false},
		{"cnsd-base64", "AAEC", true},
		{"cnsd-base64", "c2VjcmV0", true},
		{"cnsd-base64", "", false},
		{"cnsd-base64", "AAE", false},
		{"cnsd-base64", "AA\nEC", false},
		{"cnsd-base64", "AA-_", false},
		{"cnsd-base64", 42, true}, // not a string: the type keyword reports it
	}
	for _, tc := range tests {
		t.Run(tc.format+" "+compact(t, tc.value), func(t *testing.T) {
			if got := formats[tc.format](tc.value); got != tc.ok {
				t.Errorf("%s(%v) = %v, want %v", tc.format, tc.value, got, tc.ok)
			}
		})
	}
}

// TestErrorsAreStable parses a file with many faults repeatedly: every
// one is reported, in file order, and the validator's map iteration must
// not change the order.
func TestErrorsAreStable(t *testing.T) {
	data := []byte(`{
		"my_name": "ns1.example.com",
		"hostmaster": "hostmaster@example.com",
		"forward_zones": {
			"b.example.com": { "networks": ["x"], "peers": [1] },
			"a.example.com": { "networks": [] }
		},
		"ttl": { "soa_retry": -1, "record": 0 },
		"use_alias": 1
	}`)
	want := `config: 6 problems: forward_zones["b.example.com"].networks[0]: must be a network or network pool UUID, or "*", got "x"; ` +
		`forward_zones["b.example.com"].peers[0]: must be a string, got 1; ` +
		`forward_zones["a.example.com"].networks: must list at least one network, got an empty array; ` +
		`ttl.soa_retry: must be at least 0, got -1; ttl.record: must be at least 1, got 0; use_alias: must be a boolean, got 1`
	for range 50 {
		if _, err := Parse(data); err == nil || err.Error() != want {
			t.Fatalf("got %v, want %s", err, want)
		}
	}
}

// TestOperatorGuideNamesEveryKey keeps docs/operator-guide.md complete:
// every key the schema defines, at any depth, must appear in it in code
// spelling, alone or as a segment of a dotted key (`ttl.soa_retry`).
func TestOperatorGuideNamesEveryKey(t *testing.T) {
	guide, err := os.ReadFile("../docs/operator-guide.md")
	if err != nil {
		t.Fatal(err)
	}
	var segments = map[string]bool{}
	for _, span := range regexp.MustCompile("`[^`\n]+`").FindAllString(string(guide), -1) {
		for _, s := range regexp.MustCompile(`[A-Za-z_][A-Za-z0-9_]*`).FindAllString(span, -1) {
			segments[s] = true
		}
	}
	root := rawSchema(t)
	keys := map[string]string{}
	collectKeys(t, root, root, "", keys, map[string]bool{})
	if len(keys) < 50 {
		t.Fatalf("found %d keys in the schema; the walk is broken", len(keys))
	}
	for name, at := range keys {
		if !segments[name] {
			t.Errorf("configuration key %s (%q) is not in docs/operator-guide.md", at, name)
		}
	}
}

// collectKeys records every property name under node with the path it
// was first found at.
func collectKeys(t *testing.T, root, node map[string]any, at string, keys map[string]string, seen map[string]bool) {
	if ref, ok := node["$ref"].(string); ok {
		if seen[ref] {
			return
		}
		seen[ref] = true
		defer delete(seen, ref)
	}
	node = resolve(t, root, node)
	if props, ok := node["properties"].(map[string]any); ok {
		for name, p := range props {
			if _, dup := keys[name]; !dup {
				keys[name] = strings.TrimPrefix(at+"."+name, ".")
			}
			collectKeys(t, root, p.(map[string]any), at+"."+name, keys, seen)
		}
	}
	for _, k := range []string{"additionalProperties", "items"} {
		if sub, ok := node[k].(map[string]any); ok {
			collectKeys(t, root, sub, at+"[]", keys, seen)
		}
	}
	for _, k := range []string{"oneOf", "anyOf", "allOf"} {
		if subs, ok := node[k].([]any); ok {
			for _, s := range subs {
				if m, ok := s.(map[string]any); ok {
					collectKeys(t, root, m, at, keys, seen)
				}
			}
		}
	}
}
