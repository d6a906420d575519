package mockcloud

import (
	"encoding/json"
	"testing"
)

func TestWantsV2(t *testing.T) {
	tests := []struct {
		header string
		want   bool
	}{
		{"", false}, {"*", false}, {"~1", false}, {"1.0.0", false}, {"^1.2", false},
		{"~2", true}, {"2.0.0", true}, {">=2", true}, {"~3", true}, {"garbage", false},
	}
	for _, tt := range tests {
		t.Run(tt.header, func(t *testing.T) {
			if got := wantsV2(tt.header); got != tt.want {
				t.Errorf("wantsV2(%q) = %v, want %v", tt.header, got, tt.want)
			}
		})
	}
}

func TestParseRegistration(t *testing.T) {
	known := map[string]Resource{"vm": VMResource}
	tests := []struct {
		name     string
		v2       bool
		frame    string
		reason   string
		instance string
		subs     []string
	}{
		{name: "v1", frame: `{"instance":"i","service":"cns","changeKind":{"resource":"vm","subResources":["tags","state"]}}`,
			instance: "i", subs: []string{"tags", "state"}},
		{name: "v1 non-string subResources are dropped", frame: `{"instance":"i","changeKind":{"resource":"vm","subResources":["tags",1,null]}}`,
			instance: "i", subs: []string{"tags"}},
		{name: "v2", v2: true, frame: `{"instance":"i","resources":[{"resource":"vm","subResources":["nics"]}]}`,
			instance: "i", subs: []string{"nics"}},
		{name: "v1 array", frame: `[]`, reason: "v1 registration should be an object"},
		{name: "v1 no changeKind", frame: `{"instance":"i"}`, reason: `v1 registration should contain a "changeKind"`},
		{name: "v1 resource not a string", frame: `{"instance":"i","changeKind":{"resource":1,"subResources":[]}}`,
			reason: `v1 registration should contain a valid "resource"`},
		{name: "v1 no subResources", frame: `{"instance":"i","changeKind":{"resource":"vm"}}`,
			reason: `v1 registration should contain a valid "subResources" array`},
		{name: "v2 resource not an object", v2: true, frame: `{"instance":"i","resources":["vm"]}`,
			reason: `v2 registration "resources" array should contain objects`},
		{name: "v2 empty resource name", v2: true, frame: `{"instance":"i","resources":[{"resource":"","subResources":[]}]}`,
			reason: `v2 registration resources should contain a "resource"`},
		{name: "v2 no subResources", v2: true, frame: `{"instance":"i","resources":[{"resource":"vm"}]}`,
			reason: `v2 registration resources should contain "subResources"`},
		{name: "v2 not JSON", v2: true, frame: `{`, reason: "failed to parse v2 registration payload"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			sub, reason := parseRegistration([]byte(tt.frame), tt.v2, known)
			if reason != tt.reason {
				t.Fatalf("reason %q, want %q", reason, tt.reason)
			}
			if reason != "" {
				return
			}
			if sub.instance != tt.instance || len(sub.subs["vm"]) != len(tt.subs) {
				t.Errorf("got instance %q subs %v, want %q %v", sub.instance, sub.subs, tt.instance, tt.subs)
			}
		})
	}
}

// FuzzParseRegistration: any frame is refused with a reason or gives a
// registration whose bootstrap frame is valid JSON.
func FuzzParseRegistration(f *testing.F) {
	f.Add([]byte(`{"instance":"i","changeKind":{"resource":"vm","subResources":["tags"]}}`), false)
	f.Add([]byte(`{"instance":"i","resources":[{"resource":"vm","subResources":["tags"]}]}`), true)
	f.Add([]byte(`heartbeat`), false)
	known := map[string]Resource{"vm": VMResource}
	f.Fuzz(func(t *testing.T, frame []byte, v2 bool) {
		sub, reason := parseRegistration(frame, v2, known)
		if reason != "" {
			return
		}
		if len(sub.order) == 0 {
			t.Fatalf("accepted %q without a resource", frame)
		}
		if !json.Valid(sub.bootstrap(v2, known)) {
			t.Fatalf("bootstrap for %q is not JSON", frame)
		}
	})
}
