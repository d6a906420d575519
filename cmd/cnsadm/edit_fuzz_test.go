package main

import (
	"testing"
)

// FuzzEdit parses an arbitrary configuration file and an arbitrary edit
// argument, as an operator could type them: nothing panics, and a file
// that parsed and took the edit still writes out as a JSON object that
// parses again.
func FuzzEdit(f *testing.F) {
	f.Add(`{"forward_zones": {"a.example.test": {"networks": ["*"]}}, "use_alias": false}`, "forward_zones.a.example.test.peers+=ns2.example.test")
	f.Add(`{"forward_zones": {}}`, "use_alias=true")
	f.Add(`{"a": [1, "x"]}`, "a-=x")
	f.Add(`{"a": {"b": 1}}`, "a=2")
	f.Add(`{}`, "=")
	f.Fuzz(func(t *testing.T, file, arg string) {
		o, err := parseObj([]byte(file))
		if err != nil {
			return
		}
		e, err := parseEdit(arg)
		if err != nil {
			return
		}
		if err := e.apply(o); err != nil {
			return
		}
		out := marshal(o)
		if _, err := parseObj(out); err != nil {
			t.Fatalf("the edited file does not parse again: %v\n%s", err, out)
		}
	})
}
