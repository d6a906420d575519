package schema

import (
	"bytes"
	"encoding/json"
	"strconv"
	"strings"
)

// Upgrade rewrites a configuration file in the RFD 1 spelling (dns_zones,
// and slaves and hidden_master in zones and reverse_zones) to the current
// one (forward_zones, peers, hidden_primary). Everything else is kept,
// including the order of keys and numbers as written; the output is
// indented with two spaces and ends with a newline. A file that does not
// parse is an error, as from Parse.
func Upgrade(data []byte) ([]byte, error) {
	_, tree, err := parse(data)
	if err != nil {
		return nil, err
	}
	var b bytes.Buffer
	write(&b, tree, "")
	b.WriteByte('\n')
	return b.Bytes(), nil
}

// write appends v to b as indented JSON; indent is the current line's.
func write(b *bytes.Buffer, v any, indent string) {
	switch c := v.(type) {
	case *object:
		if len(c.keys) == 0 {
			b.WriteString("{}")
			return
		}
		b.WriteString("{")
		for i, k := range c.keys {
			b.WriteString(separator(i, indent+"  "))
			writeString(b, k)
			b.WriteString(": ")
			write(b, c.vals[k], indent+"  ")
		}
		b.WriteString("\n" + indent + "}")
	case []any:
		if len(c) == 0 {
			b.WriteString("[]")
			return
		}
		b.WriteString("[")
		for i, e := range c {
			b.WriteString(separator(i, indent+"  "))
			write(b, e, indent+"  ")
		}
		b.WriteString("\n" + indent + "]")
	case string:
		writeString(b, c)
	case json.Number:
		b.WriteString(c.String())
	case bool:
		b.WriteString(strconv.FormatBool(c))
	case nil:
		b.WriteString("null")
	}
}

// separator starts the i-th member of a container.
func separator(i int, indent string) string {
	if i == 0 {
		return "\n" + indent
	}
	return ",\n" + indent
}

// writeString appends s as a JSON string, leaving <, > and & alone.
func writeString(b *bytes.Buffer, s string) {
	var sb strings.Builder
	e := json.NewEncoder(&sb)
	e.SetEscapeHTML(false)
	_ = e.Encode(s) // a string always encodes
	b.WriteString(strings.TrimSuffix(sb.String(), "\n"))
}
