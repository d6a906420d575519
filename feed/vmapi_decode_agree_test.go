package feed

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"reflect"
	"strings"
	"testing"
)

// agreeCases are inputs on which the single-pass decoder could most
// easily part from decodeVMRef: repeated keys, escapes, odd types where
// the reference falls back on encoding/json, syntax errors inside the
// fields cnsd skips, and the nesting bound.
var agreeCases = []string{
	`{"uuid":"u","uuid":"v"}`,
	`{"uuid":7,"uuid":"v"}`,
	`{"uuid":"v","uuid":7}`,
	`{"uuid":"v","alias":{},"alias":"a"}`,
	`{"uuid":"v","tags":"x","tags":{"a":1}}`,
	`{"uuid":"v","tags":{"a":1},"tags":null}`,
	`{"uuid":"v","nics":[1],"nics":[]}`,
	`{"uuid":"v","nics":[],"nics":[null,{}]}`,
	`{"uuid":"v","nics":[{},5,"x"]}`,
	`{"uuid":"v","alias":5,"tags":5,"nics":5}`,
	`{"uuid":"v","customer_metadata":{"a":"1","a":2,"b":null,"b":"x"}}`,
	`{"uu\u0069d":"v","st\u0061te":"running","alias":"\u00e9\ud83d\ude00\ud800"}`,
	"{\"uuid\":\"v\",\"alias\":\"\xff\xfe\",\"\xffkey\":1}",
	"{\"uuid\":\"v\",\"tags\":{\"\xff\":\"\xed\xa0\x80\"}}",
	`{"uuid":"v","tags":{"big":1e400}}`,
	`{"uuid":"v","tags":{"n":[1e400]}}`,
	`{"uuid":"v","tags":{"small":1e-400,"neg":-0,"x":1.5E+3}}`,
	`{"uuid":"v","tags":{"d":{"a":1,"a":{"b":[true,false,null,"s"]}}}}`,
	`{"uuid":"v","customer_metadata":{"d":{"b":1,"a":[1.50,"<&>\u2028"]}}}`,
	`{"uuid":"v","nics":[{"ips":["a",1e400]}]}`,
	`{"uuid":"v","nics":[{"ips":["a",{"x":1e400}]}]}`,
	`{"uuid":"v","nics":[{"ips":["a",[],{},true,1]}]}`,
	`{"uuid":"v","nics":[{"ips":5},{"ips":{}},{"ips":true},{"ips":"\u0041"}]}`,
	`{"uuid":"v","nics":[{"vlan_id":1.0},{"vlan_id":1e2},{"vlan_id":-0},{"vlan_id":99999999999999999999}]}`,
	`{"uuid":"v","nics":[{"vlan_id":"+12"},{"vlan_id":" 12"},{"vlan_id":"0x1"},{"vlan_id":null},{"vlan_id":[1]}]}`,
	`{"uuid":"v","nics":[{"ip":"a","ip":5,"mac":null}]}`,
	`{"uuid":"v","destroyed":0}`, `{"uuid":"v","destroyed":0.0}`, `{"uuid":"v","destroyed":""}`,
	`{"uuid":"v","destroyed":[]}`, `{"uuid":"v","destroyed":true,"destroyed":false}`,
	`{"uuid":"v","other":[1,2,{"x":[tru]}]}`,
	// A NUL byte is no white space: peek's 0 must not read as the end.
	"{}\x00", "{\"uuid\":\"v\"}\x00", "{\"uuid\":\"v\"} \x00 ",
	`{"uuid":"v","other":01}`, `{"uuid":"v","other":-}`, `{"uuid":"v","other":1.}`, `{"uuid":"v","other":1e}`,
	`{"uuid":"v","other":.5}`, `{"uuid":"v","other":"\x"}`, `{"uuid":"v","other":"\u12G4"}`,
	"{\"uuid\":\"v\",\"other\":\"a\tb\"}", "{\"uuid\":\"v\",\"other\":\"a\x7fb\"}",
	`{"uuid":"v",}`, `{"uuid":"v" "alias":"a"}`, `{"uuid" "v"}`, `{,"uuid":"v"}`, `{"uuid":"v"}}`,
	`{"uuid":"v"} `, ` {"uuid":"v"}` + "\n\t\r", `{"uuid":"v"} {}`, `{"uuid":"v"}x`, "\ufeff{\"uuid\":\"v\"}",
	`{"uuid":"v","a":[1,]}`, `{"uuid":"v","a":[,1]}`, `{"uuid":"v","a":{"b"}}`, `{"uuid":"v","a":nul}`,
	`{}`, `{"uuid":""}`, `{"uuid":null}`, `[]`, `null`, `"x"`, `1`, ``, ` `, `{`, `{"uuid`,
	`{"uuid":"v","a":` + strings.Repeat("[", jsonMaxDepth-1) + strings.Repeat("]", jsonMaxDepth-1) + `}`,
	`{"uuid":"v","a":` + strings.Repeat("[", jsonMaxDepth) + strings.Repeat("]", jsonMaxDepth) + `}`,
	`{"uuid":"v","nics":[{"a":` + strings.Repeat("{\"b\":", jsonMaxDepth-3) + "1" + strings.Repeat("}", jsonMaxDepth-3) + `}]}`,
	`{"uuid":"v","nics":[{"a":` + strings.Repeat("{\"b\":", jsonMaxDepth-2) + "1" + strings.Repeat("}", jsonMaxDepth-2) + `}]}`,
}

// checkAgree fails unless decodeVM and decodeVMRef give the same VM, or
// the same error, for b.
//
// decodeVM reads a copy of b, written over once it returns: what it
// returns must not refer to the text it read, which a listing reuses
// for its next pages.
func checkAgree(t *testing.T, b []byte) {
	t.Helper()
	text := bytes.Clone(b)
	got, err := decodeVM(text)
	for i := range text {
		text[i] = '#'
	}
	want, werr := decodeVMRef(b)
	if fmt.Sprint(err) != fmt.Sprint(werr) {
		t.Fatalf("decodeVM(%.200q): error %v, reference %v", b, err, werr)
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("decodeVM(%.200q) =\n%#v\nreference\n%#v", b, got, want)
	}
}

func TestDecodeVMAgrees(t *testing.T) {
	for i, in := range agreeCases {
		t.Run(fmt.Sprint(i), func(t *testing.T) { checkAgree(t, []byte(in)) })
	}
	t.Run("realistic", func(t *testing.T) {
		for _, raw := range realisticArrays(t)["vms"] {
			checkAgree(t, raw)
		}
	})
	t.Run("generated", func(t *testing.T) {
		for _, raw := range generatedVMs(t, 200) {
			checkAgree(t, raw)
		}
	})
}

// generatedVMs is the JSON of n VMs from mockcloud's generator, as the
// bootstrap benchmark's cloud sends them.
func generatedVMs(tb testing.TB, n int) [][]byte {
	tb.Helper()
	var raws [][]byte
	for _, v := range newVMCloud(n).Fixture().VMs {
		raw, err := json.Marshal(v)
		if err != nil {
			tb.Fatal(err)
		}
		raws = append(raws, raw)
	}
	return raws
}

// FuzzDecodeVMAgrees: the single-pass decodeVM and the reference decoder
// it replaced (decodeVMRef) agree on every input: the same VM, or the
// same error.
func FuzzDecodeVMAgrees(f *testing.F) {
	for _, in := range agreeCases {
		if len(in) < 1000 {
			f.Add([]byte(in))
		}
	}
	b, err := os.ReadFile(realistic)
	if err != nil {
		f.Fatal(err)
	}
	var m map[string][]json.RawMessage
	if err := json.Unmarshal(b, &m); err != nil {
		f.Fatal(err)
	}
	for _, raw := range m["vms"] {
		f.Add([]byte(raw))
	}
	f.Fuzz(checkAgree)
}
