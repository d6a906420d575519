package schema

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
)

// Parse decodes and validates a configuration file: decoding, RFD 1
// spelling, unknown keys, the JSON schema, defaults and cross-field
// checks, in that order (see the package documentation). A rejection is
// an *Error that wraps ErrInvalid.
func Parse(data []byte) (*Config, error) {
	c, _, err := parse(data)
	return c, err
}

// Load reads the file at name and parses it. Errors name the file.
func Load(name string) (*Config, error) {
	data, err := os.ReadFile(name)
	if err != nil {
		return nil, fmt.Errorf("config: %w", err)
	}
	return ParseFile(name, data)
}

// ParseFile parses data, read from the file at name: errors name the file,
// and the paths the configuration gives relative to its file (the API
// token file) are resolved.
func ParseFile(name string, data []byte) (*Config, error) {
	c, err := Parse(data)
	if es, ok := errors.AsType[Errors](err); ok {
		for _, e := range es {
			e.File = name
		}
	} else if e, ok := errors.AsType[*Error](err); ok {
		e.File = name
	}
	if err == nil {
		c.API.TokenFile = tokenFileOf(c, name)
	}
	return c, err
}

// tokenFileOf is where the API token of c, loaded from the file name, is
// kept: a relative name is relative to the configuration file, and a
// Redis store, which has no local directory, keeps it beside the
// configuration file.
func tokenFileOf(c *Config, name string) string {
	switch {
	case c.API.TokenFile == "":
		return filepath.Join(filepath.Dir(name), tokenFileName)
	case c.API.tokenFileSet && !filepath.IsAbs(c.API.TokenFile):
		return filepath.Join(filepath.Dir(name), c.API.TokenFile)
	}
	return c.API.TokenFile
}

// parse runs the pipeline and also returns the normalised tree, which
// Upgrade writes out.
func parse(data []byte) (*Config, any, error) {
	s, err := compiled()
	if err != nil {
		return nil, nil, err
	}
	tree, err := decode(data)
	if err != nil {
		return nil, nil, err
	}
	if err := normalise(tree); err != nil {
		return nil, nil, err
	}
	// Unknown keys and values the schema refuses are reported together.
	if err := joinErrors(strict(tree), s.validate(tree)); err != nil {
		return nil, nil, err
	}
	c, err := bind(tree)
	if err != nil {
		return nil, nil, err
	}
	if err := check(c); err != nil {
		return nil, nil, err
	}
	return c, tree, nil
}
