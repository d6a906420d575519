package schema

import (
	"bytes"
	_ "embed"
	"encoding/json"
	"fmt"
	"io"
	"sync"

	"github.com/santhosh-tekuri/jsonschema/v5"
)

//go:embed config.schema.json
var configSchema []byte

// ConfigSchema returns a copy of the JSON schema of the configuration file
// (draft 2020-12). cnsd validates with it; operators and editors may use
// it as documentation.
func ConfigSchema() []byte { return bytes.Clone(configSchema) }

// configURL is the schema's $id, under which it is compiled.
const configURL = "https://github.com/cnsd/cnsd/schema/config.schema.json"

// compiled is the configuration schema, compiled once, together with its
// raw JSON for error messages.
var compiled = sync.OnceValues(func() (*compiledSchema, error) {
	c := jsonschema.NewCompiler()
	c.Draft = jsonschema.Draft2020
	c.AssertFormat = true
	c.LoadURL = func(u string) (io.ReadCloser, error) {
		return nil, fmt.Errorf("schema %s: remote references are not allowed", u)
	}
	for name, f := range formats {
		c.Formats[name] = f
	}
	if err := c.AddResource(configURL, bytes.NewReader(configSchema)); err != nil {
		return nil, fmt.Errorf("config schema: %w", err)
	}
	s, err := c.Compile(configURL)
	if err != nil {
		return nil, fmt.Errorf("config schema: %w", err)
	}
	d := json.NewDecoder(bytes.NewReader(configSchema))
	d.UseNumber()
	var raw any
	if err := d.Decode(&raw); err != nil {
		return nil, fmt.Errorf("config schema: %w", err)
	}
	return &compiledSchema{root: s, raw: raw}, nil
})

// compiledSchema is the compiled schema and its raw JSON document.
type compiledSchema struct {
	root *jsonschema.Schema
	raw  any
}
