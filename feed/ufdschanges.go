package feed

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
)

// parseChanges returns the attribute names a changelog entry's "changes"
// touch. UFDS stores them as a JSON string in one of two shapes: for a
// modify, the list of LDAP modifications
// [{"operation":"replace","modification":{"type":"login","vals":["x"]}}];
// for an add (and some deletes), the entry itself as an object of
// attribute names to values.
func parseChanges(s string) ([]string, error) {
	b := bytes.TrimSpace([]byte(s))
	if len(b) == 0 {
		return nil, errors.New("changes: empty")
	}
	switch b[0] {
	case '[':
		var mods []struct {
			Operation    string `json:"operation"`
			Modification *struct {
				Type string `json:"type"`
			} `json:"modification"`
		}
		if err := json.Unmarshal(b, &mods); err != nil {
			return nil, fmt.Errorf("changes: %w", err)
		}
		names := make([]string, 0, len(mods))
		for i, m := range mods {
			if m.Modification == nil || m.Modification.Type == "" {
				return nil, fmt.Errorf("changes: modification %d names no attribute", i)
			}
			names = append(names, m.Modification.Type)
		}
		return names, nil
	case '{':
		var entry map[string]json.RawMessage
		if err := json.Unmarshal(b, &entry); err != nil {
			return nil, fmt.Errorf("changes: %w", err)
		}
		names := make([]string, 0, len(entry))
		for k := range entry {
			names = append(names, k)
		}
		return names, nil
	}
	return nil, fmt.Errorf("changes: neither a list nor an object: %.20q", s)
}
