package schema

import (
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
)

// ErrInvalid is wrapped by every error that rejects a configuration, so
// callers can tell a bad file (errors.Is(err, ErrInvalid)) from a file
// that could not be read.
var ErrInvalid = errors.New("invalid configuration")

// Error is the rejection of a configuration. Its message reads
// "config: [file: ][path: ]message"; it wraps ErrInvalid.
type Error struct {
	// File is the file name when the configuration came from Load.
	File string
	// Path names the field, for example
	// forward_zones["dc1.cns.example.com"].networks[0]; it is empty when
	// the problem is with the file as a whole.
	Path string
	// Message says what is wrong, including the offending value.
	Message string
}

// Error implements error.
func (e *Error) Error() string {
	s := "config: "
	if e.File != "" {
		s += e.File + ": "
	}
	if e.Path != "" {
		s += e.Path + ": "
	}
	return s + e.Message
}

// Unwrap returns ErrInvalid.
func (e *Error) Unwrap() error { return ErrInvalid }

// Errors are the rejections of one configuration when there are
// several, in file order; every one wraps ErrInvalid. Its message reads
// "config: [file: ]N problems: path: message; path: message…". A
// configuration with one problem is rejected with an *Error instead.
type Errors []*Error

// Error implements error.
func (es Errors) Error() string {
	if len(es) == 1 {
		return es[0].Error()
	}
	s := "config: "
	if len(es) > 0 && es[0].File != "" {
		s += es[0].File + ": "
	}
	s += strconv.Itoa(len(es)) + " problems: "
	for i, e := range es {
		if i > 0 {
			s += "; "
		}
		if e.Path != "" {
			s += e.Path + ": "
		}
		s += e.Message
	}
	return s
}

// Unwrap returns every *Error, so that errors.Is(err, ErrInvalid) holds
// and errors.As finds the first.
func (es Errors) Unwrap() []error {
	out := make([]error, len(es))
	for i, e := range es {
		out[i] = e
	}
	return out
}

// joinErrors merges errors that are each nil, an *Error or Errors into
// one error as err does, each problem once (an unknown key is refused by
// strict and by the schema alike); any other error is kept as the message
// of an *Error.
func joinErrors(errs ...error) error {
	var all Errors
	seen := map[string]bool{}
	keep := func(e *Error) {
		if k := e.Path + "\x00" + e.Message; !seen[k] {
			seen[k] = true
			all = append(all, e)
		}
	}
	for _, err := range errs {
		var one *Error
		var many Errors
		switch {
		case err == nil:
		case errors.As(err, &many):
			for _, e := range many {
				keep(e)
			}
		case errors.As(err, &one):
			keep(one)
		default:
			keep(&Error{Message: err.Error()})
		}
	}
	return all.err()
}

// err returns nil for no errors, the *Error for one, es for several.
func (es Errors) err() error {
	switch len(es) {
	case 0:
		return nil
	case 1:
		return es[0]
	}
	return es
}

// invalid returns an *Error for path p.
func invalid(p path, format string, args ...any) *Error {
	return &Error{Path: string(p), Message: fmt.Sprintf(format, args...)}
}

// path is a field path in the style of error messages:
// forward_zones["a.example.com"].networks[0].
type path string

// field appends a key the schema defines: p.name (or name at the top).
func (p path) field(name string) path {
	if p == "" {
		return path(name)
	}
	return p + "." + path(name)
}

// entry appends a key chosen by the user, such as a zone name: p["name"].
func (p path) entry(name string) path {
	return p + "[" + path(strconv.Quote(name)) + "]"
}

// index appends an array index: p[i].
func (p path) index(i int) path {
	return p + "[" + path(strconv.Itoa(i)) + "]"
}

// describe renders a decoded JSON value for a message: strings quoted,
// numbers and literals as written, containers by kind.
func describe(v any) string {
	switch v := v.(type) {
	case nil:
		return "null"
	case string:
		return strconv.Quote(v)
	case bool:
		return strconv.FormatBool(v)
	case json.Number:
		return v.String()
	case []any:
		if len(v) == 0 {
			return "an empty array"
		}
		return "an array"
	case *object:
		if len(v.keys) == 0 {
			return "an empty object"
		}
		return "an object"
	}
	return fmt.Sprintf("%v", v)
}
