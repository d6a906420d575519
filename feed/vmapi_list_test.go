package feed

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
)

func TestTopUUID(t *testing.T) {
	for _, tc := range []struct {
		name, in string
		want     string
		ok       bool
	}{
		{"plain", `{"uuid":"u","tags":"x"}`, "u", true},
		{"spaces", " {\n \"alias\" : \"uuid\" , \"uuid\" : \"u\" }", "u", true},
		{"nested uuid ignored", `{"nics":[{"uuid":"n"}],"tags":{"uuid":"t"},"uuid":"u"}`, "u", true},
		{"value named uuid", `{"alias":"uuid","x":["uuid",{"a":"uuid"}]}`, "", true},
		{"repeated: the last", `{"uuid":"a","uuid":"b"}`, "b", true},
		{"absent", `{"alias":"a"}`, "", true},
		{"number", `{"uuid":3}`, "", false},
		{"null", `{"uuid":null}`, "", false},
		{"escaped key", `{"\u0075uid":"u"}`, "", false},
		{"escaped value", `{"uuid":"\u0075"}`, "", false},
		{"not ascii", `{"uuid":"é"}`, "", false},
		{"array", `[{"uuid":"u"}]`, "", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, ok := topUUID([]byte(tc.in))
			if got != tc.want || ok != tc.ok {
				t.Errorf("topUUID(%s) = %q, %v; want %q, %v", tc.in, got, ok, tc.want, tc.ok)
			}
			if ok && got != vmUUID([]byte(tc.in)) {
				t.Errorf("topUUID(%s) = %q, vmUUID says %q", tc.in, got, vmUUID([]byte(tc.in)))
			}
		})
	}
}

// FuzzTopUUID: on valid JSON, whatever topUUID is sure of is what vmUUID
// reads.
func FuzzTopUUID(f *testing.F) {
	for _, s := range []string{`{"uuid":"u","tags":{"uuid":"x"}}`, `{"a":["uuid"],"uuid":"v"}`, `{"uuid":"a","uuid":"b"}`, `{}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		if !json.Valid(b) {
			return
		}
		if got, ok := topUUID(b); ok && got != vmUUID(b) {
			t.Errorf("topUUID(%q) = %q, vmUUID says %q", b, got, vmUUID(b))
		}
	})
}

func TestReadArray(t *testing.T) {
	for _, tc := range []struct {
		name, in string
		n        int
		err      error
	}{
		{"empty", `[]`, 0, nil},
		{"two", ` [ {"uuid":"a"} , {"uuid":"b"} ] `, 2, nil},
		{"object", `{"uuid":"a"}`, 0, errNotArray},
		{"truncated", `[{"uuid":"a"},`, 0, errNotArray},
		{"trailing", `[] []`, 0, errNotArray},
		{"bad element", `[{"uuid":}]`, 0, errNotArray},
		{"nothing", ``, 0, errNotArray},
		{"no comma", `[{} {}]`, 0, errNotArray},
		{"trailing comma", `[{},]`, 0, errNotArray},
		{"not closed", `[{}`, 0, errNotArray},
		{"odd elements", "[1, \"s\", null, [[]], {\"a\":{}}]\n", 5, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			items, err := readArray(strings.NewReader(tc.in), 4)
			if !errors.Is(err, tc.err) || len(items) != tc.n {
				t.Errorf("readArray(%s) = %d items, %v; want %d, %v", tc.in, len(items), err, tc.n, tc.err)
			}
		})
	}
}
