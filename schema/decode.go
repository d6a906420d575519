package schema

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"unicode/utf8"
)

// decode parses data as exactly one JSON value into an ordered tree.
// Syntax errors give the line and column; empty and duplicate keys,
// numbers out of range and deep nesting are rejected with their location.
func decode(data []byte) (any, error) {
	if err := syntax(data); err != nil {
		return nil, err
	}
	d := json.NewDecoder(bytes.NewReader(data))
	d.UseNumber()
	v, err := value(d, nil)
	if err != nil && !errors.As(err, new(*Error)) {
		return nil, &Error{Message: err.Error()} // syntax checked above: not expected
	}
	return v, err
}

// syntax checks that data is one well-formed JSON value and nothing else.
func syntax(data []byte) error {
	if len(bytes.TrimSpace(data)) == 0 {
		return &Error{Message: "file is empty"}
	}
	var raw json.RawMessage
	err := json.Unmarshal(data, &raw)
	if err == nil {
		return nil
	}
	var se *json.SyntaxError
	if !errors.As(err, &se) {
		return &Error{Message: err.Error()}
	}
	// Offset counts the bytes read up to and including the bad one.
	at := int(se.Offset) - 1
	msg := se.Error()
	if msg == "unexpected end of JSON input" {
		at, msg = len(data), "unexpected end of input"
	}
	line, col := position(data, at)
	return &Error{Message: fmt.Sprintf("line %d, column %d: %s", line, col, msg)}
}

// position returns the 1-based line and column (in characters) of byte
// offset at in data.
func position(data []byte, at int) (line, col int) {
	at = max(0, min(at, len(data)))
	before := data[:at]
	start := bytes.LastIndexByte(before, '\n') + 1
	return bytes.Count(before, []byte{'\n'}) + 1, utf8.RuneCount(before[start:]) + 1
}

// maxDepth bounds the nesting of objects and arrays. The configuration
// needs five levels; the bound keeps work linear in the file's size.
const maxDepth = 32

// value reads the next value from d, which holds well-formed JSON.
func value(d *json.Decoder, at loc) (any, error) {
	if len(at) > maxDepth {
		return nil, invalid(pathOf(at[:maxDepth]), "nested deeper than %d levels", maxDepth)
	}
	tok, err := d.Token()
	if err != nil {
		return nil, err
	}
	switch t := tok.(type) {
	case json.Delim:
		if t == '{' {
			return objectValue(d, at)
		}
		return arrayValue(d, at)
	case json.Number:
		if !number(t) {
			return nil, invalid(pathOf(at), "number out of range, got %s", t)
		}
	}
	return tok, nil
}

// objectValue reads the members of an object whose '{' has been read.
func objectValue(d *json.Decoder, at loc) (any, error) {
	o := newObject()
	for d.More() {
		tok, err := d.Token()
		if err != nil {
			return nil, err
		}
		k, _ := tok.(string)
		if k == "" {
			// Never meaningful here, and lost in the validator's JSON
			// pointers, which would misplace errors under it.
			return nil, invalid(pathOf(at), "empty key")
		}
		if o.has(k) {
			return nil, invalid(pathOf(at), "duplicate key %q", k)
		}
		v, err := value(d, at.key(k))
		if err != nil {
			return nil, err
		}
		o.set(k, v)
	}
	_, err := d.Token() // '}'
	return o, err
}

// arrayValue reads the elements of an array whose '[' has been read.
func arrayValue(d *json.Decoder, at loc) (any, error) {
	a := []any{}
	for d.More() {
		v, err := value(d, at.at(len(a)))
		if err != nil {
			return nil, err
		}
		a = append(a, v)
	}
	_, err := d.Token() // ']'
	return a, err
}
