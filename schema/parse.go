package schema

import (
	"errors"
	"fmt"
	"os"
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
	c, err := Parse(data)
	if e, ok := errors.AsType[*Error](err); ok {
		e.File = name
	}
	return c, err
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
	if err := strict(tree); err != nil {
		return nil, nil, err
	}
	if err := s.validate(tree); err != nil {
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
