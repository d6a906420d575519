package feed

import (
	"encoding/json"
	"errors"
	"fmt"
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
		{"escaped other key", `{"uuid":"u","\u0061":1}`, "", false},
		{"uuid then number", `{"uuid":"u","uuid":1}`, "", false},
		{"not plain, then plain", `{"uuid":"\u0075","uuid":"v"}`, "", false},
		{"empty", `{"uuid":""}`, "", true},
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

// topUUID runs jsonScan.topUUID over b, checking that it read the value
// whole, as skip does.
func topUUID(b []byte) (string, bool) {
	s, skipped := jsonScan{b: b}, jsonScan{b: b}
	id, ok := s.topUUID()
	skipped.skip()
	if s.i != skipped.i || s.bad != skipped.bad {
		panic(fmt.Sprintf("topUUID(%q) stops at %d (bad %v), skip at %d (bad %v)", b, s.i, s.bad, skipped.i, skipped.bad))
	}
	return string(id), ok
}

// FuzzTopUUID: on valid JSON, whatever topUUID is sure of is what vmUUID
// reads; on any input, it reads as far as skip does.
func FuzzTopUUID(f *testing.F) {
	for _, s := range []string{`{"uuid":"u","tags":{"uuid":"x"}}`, `{"a":["uuid"],"uuid":"v"}`, `{"uuid":"a","uuid":"b"}`, `{}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		got, ok := topUUID(b)
		if !json.Valid(b) {
			return
		}
		if ok && got != vmUUID(b) {
			t.Errorf("topUUID(%q) = %q, vmUUID says %q", b, got, vmUUID(b))
		}
	})
}

func TestReadPage(t *testing.T) {
	for _, tc := range []struct {
		name, in string
		n        int
		least    string
		err      error
	}{
		{"empty", `[]`, 0, "", nil},
		{"two", ` [ {"uuid":"a"} , {"uuid":"b"} ] `, 2, "a", nil},
		{"object", `{"uuid":"a"}`, 0, "", errNotArray},
		{"truncated", `[{"uuid":"a"},`, 0, "", errNotArray},
		{"trailing", `[] []`, 0, "", errNotArray},
		{"trailing NUL", "[{\"uuid\":\"a\"}]\x00", 0, "", errNotArray},
		{"bad element", `[{"uuid":}]`, 0, "", errNotArray},
		{"nothing", ``, 0, "", errNotArray},
		{"no comma", `[{} {}]`, 0, "", errNotArray},
		{"trailing comma", `[{},]`, 0, "", errNotArray},
		{"not closed", `[{}`, 0, "", errNotArray},
		{"odd elements", "[1, \"s\", null, [[]], {\"a\":{}}]\n", 5, "", nil},
		{"least of plain ones", `[{"uuid":"c"},{"uuid":"a","alias":"0"},{"uuid":"b"}]`, 3, "a", nil},
		{"escaped uuid counts", `[{"uuid":"c"},{"uuid":"\u0061"},{"uuid":"b"}]`, 3, "a", nil},
		{"escaped key counts", `[{"uuid":"c"},{"\u0075uid":"a"}]`, 2, "a", nil},
		{"malformed VM counts", `[{"uuid":"c","nics":3},{"uuid":"b","tags":[]}]`, 2, "b", nil},
		{"no uuid, or not a string", `[{"uuid":"c"},{"alias":"a"},{"uuid":1},{"uuid":""}]`, 4, "c", nil},
		{"nested uuids ignored", `[{"uuid":"c","nics":[{"uuid":"a"}],"tags":{"uuid":"a"}}]`, 1, "c", nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			// Into no buffer, and into spare ones of a page read before,
			// too small and large enough.
			for _, buf := range [][]byte{nil, []byte("[{}]"), []byte(strings.Repeat("x", 2*len(tc.in)+1))} {
				items, least, body, err := readPage(strings.NewReader(tc.in), 4, buf)
				if !errors.Is(err, tc.err) || len(items) != tc.n || least != tc.least {
					t.Errorf("readPage(%s) = %d items, %q, %v; want %d, %q, %v", tc.in, len(items), least, err, tc.n, tc.least, tc.err)
				}
				if err == nil && string(body) != tc.in {
					t.Errorf("readPage(%s) read %q", tc.in, body)
				}
			}
		})
	}
}
