package api

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"mime"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v5"
)

// specURL is the name openapi.json is compiled under; its schemas are
// compiled by JSON pointer into it, so $refs resolve within it.
const specURL = "https://github.com/cnsd/cnsd/api/openapi.json"

// spec is openapi.json, read for the tests: its operations, and their
// answers' schemas compiled as JSON Schema 2020-12 (OpenAPI 3.1's
// dialect).
type spec struct {
	doc map[string]any
	c   *jsonschema.Compiler

	mu       sync.Mutex
	compiled map[string]*jsonschema.Schema // by JSON pointer
}

// operation is one operation of the document.
type operation struct {
	method, path string // GET, /peer/{addr}
	access       string // x-cnsd-access
	obj          map[string]any
}

func loadSpec(t *testing.T) *spec {
	t.Helper()
	var doc map[string]any
	if err := json.Unmarshal(openAPI, &doc); err != nil {
		t.Fatalf("openapi.json: %v", err)
	}
	c := jsonschema.NewCompiler()
	c.Draft = jsonschema.Draft2020
	c.AssertFormat = true
	c.LoadURL = func(u string) (_ io.ReadCloser, err error) {
		return nil, fmt.Errorf("%s: openapi.json may refer only to itself", u)
	}
	if err := c.AddResource(specURL, bytes.NewReader(openAPI)); err != nil {
		t.Fatal(err)
	}
	return &spec{doc: doc, c: c, compiled: map[string]*jsonschema.Schema{}}
}

// operations lists the document's operations, sorted by path and method.
func (sp *spec) operations() []operation {
	var out []operation
	paths := sp.doc["paths"].(map[string]any)
	for _, path := range slices.Sorted(maps.Keys(paths)) {
		item := paths[path].(map[string]any)
		for _, m := range slices.Sorted(maps.Keys(item)) {
			if m == "parameters" {
				continue
			}
			o := item[m].(map[string]any)
			access, _ := o["x-cnsd-access"].(string)
			out = append(out, operation{method: strings.ToUpper(m), path: path, access: access, obj: o})
		}
	}
	return out
}

// operation finds the operation that answers method on a concrete path,
// matching each {parameter} of the document's paths to one segment.
func (sp *spec) operation(method, path string) (operation, bool) {
	for _, o := range sp.operations() {
		if o.method == method && pathMatches(o.path, path) {
			return o, true
		}
	}
	return operation{}, false
}

func pathMatches(template, path string) bool {
	ts, ps := strings.Split(template, "/"), strings.Split(path, "/")
	if len(ts) != len(ps) {
		return false
	}
	for i := range ts {
		if strings.HasPrefix(ts[i], "{") && strings.HasSuffix(ts[i], "}") {
			if ps[i] == "" {
				return false
			}
			continue
		}
		if ts[i] != ps[i] {
			return false
		}
	}
	return true
}

// pointer is the JSON pointer of the operation's member names.
func (o operation) pointer(names ...string) string {
	esc := strings.NewReplacer("~", "~0", "/", "~1")
	p := "/paths/" + esc.Replace(o.path) + "/" + strings.ToLower(o.method)
	for _, n := range names {
		p += "/" + esc.Replace(n)
	}
	return p
}

// response is the operation's answer for status: its JSON pointer
// (after a $ref to components/responses), its object, and whether the
// status is listed explicitly rather than answered by default.
func (sp *spec) response(o operation, status int) (ptr string, resp map[string]any, explicit bool) {
	responses := o.obj["responses"].(map[string]any)
	key := strconv.Itoa(status)
	r, explicit := responses[key].(map[string]any)
	if !explicit {
		key = "default"
		r = responses[key].(map[string]any)
	}
	ptr = o.pointer("responses", key)
	if ref, ok := r["$ref"].(string); ok {
		ptr = strings.TrimPrefix(ref, "#")
		r = sp.at(ptr).(map[string]any)
	}
	return ptr, r, explicit
}

// at is the value at a JSON pointer of the document.
func (sp *spec) at(ptr string) any {
	var v any = sp.doc
	unesc := strings.NewReplacer("~1", "/", "~0", "~")
	for _, tok := range strings.Split(strings.TrimPrefix(ptr, "/"), "/") {
		v = v.(map[string]any)[unesc.Replace(tok)]
	}
	return v
}

// schema compiles the schema at a JSON pointer of the document.
func (sp *spec) schema(t *testing.T, ptr string) *jsonschema.Schema {
	t.Helper()
	sp.mu.Lock()
	defer sp.mu.Unlock()
	if s := sp.compiled[ptr]; s != nil {
		return s
	}
	s, err := sp.c.Compile(specURL + "#" + ptr)
	if err != nil {
		t.Fatalf("openapi.json#%s: %v", ptr, err)
	}
	sp.compiled[ptr] = s
	return s
}

// validate checks a JSON body against the schema at ptr.
func (sp *spec) validate(t *testing.T, ptr string, body []byte) error {
	t.Helper()
	d := json.NewDecoder(bytes.NewReader(body))
	d.UseNumber()
	var v any
	if err := d.Decode(&v); err != nil {
		return fmt.Errorf("not JSON: %v: %q", err, body)
	}
	if d.More() {
		return fmt.Errorf("more than one JSON value: %q", body)
	}
	return sp.schema(t, ptr).Validate(v)
}

// checkAnswer checks an answer to method on a concrete path against the
// document: the operation exists, and the status (or default) has the
// content type and a body its schema accepts, or no body when it
// documents none. It returns the operation and whether the status is
// listed explicitly.
func (sp *spec) checkAnswer(t *testing.T, method, path string, status int, h http.Header, body []byte) (operation, bool) {
	t.Helper()
	o, ok := sp.operation(method, path)
	if !ok {
		t.Fatalf("openapi.json has no operation %s %s", method, path)
	}
	ptr, resp, explicit := sp.response(o, status)
	content, _ := resp["content"].(map[string]any)
	if len(content) == 0 {
		if len(body) != 0 {
			t.Errorf("%s %s %d: openapi.json documents no body, got %q", method, path, status, body)
		}
		return o, explicit
	}
	ctype, _, _ := mime.ParseMediaType(h.Get("Content-Type"))
	if _, ok := content[ctype]; !ok {
		t.Fatalf("%s %s %d: Content-Type %q, openapi.json documents %v", method, path, status, ctype, slices.Collect(maps.Keys(content)))
	}
	if ctype != "application/json" {
		return o, explicit
	}
	esc := strings.NewReplacer("~", "~0", "/", "~1")
	if err := sp.validate(t, ptr+"/content/"+esc.Replace(ctype)+"/schema", body); err != nil {
		t.Errorf("%s %s %d: the body does not match openapi.json (%s): %v\n%s", method, path, status, ptr, err, body)
	}
	return o, explicit
}

// checkError checks that an answer with no operation (no such route or
// method) is an Error body as openapi.json describes it.
func (sp *spec) checkError(t *testing.T, h http.Header, body []byte) {
	t.Helper()
	if ctype, _, _ := mime.ParseMediaType(h.Get("Content-Type")); ctype != "application/json" {
		t.Fatalf("Content-Type %q, want application/json: %q", h.Get("Content-Type"), body)
	}
	if err := sp.validate(t, "/components/schemas/Error", body); err != nil {
		t.Errorf("not an Error body: %v: %s", err, body)
	}
}
