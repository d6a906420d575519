package feed

import "testing"

func TestDecodeFrame(t *testing.T) {
	tests := []struct {
		name    string
		in      string
		want    changefeedFrame
		wantErr bool
	}{
		{name: "v1 bootstrap", in: `{"resource":"vm","subResources":["alias"],"bootstrapRoute":"/vms"}`,
			want: changefeedFrame{bootstrap: true, route: "/vms"}},
		{name: "v2 bootstrap", in: `{"bootstrapRoutes":[{"resource":"vm","bootstrapRoute":"/vms"}]}`,
			want: changefeedFrame{bootstrap: true}},
		{name: "bootstrap route of another type", in: `{"bootstrapRoute":7}`, want: changefeedFrame{bootstrap: true}},
		{name: "item", in: `{"changeKind":{"resource":"vm","subResources":["tags"]},"changedResourceId":"u1","resourceObject":{"uuid":"u1"},"published":"1767225600000"}`,
			want: changefeedFrame{resource: "vm", id: "u1"}},
		{name: "item without changeKind", in: `{"changedResourceId":"u1"}`, want: changefeedFrame{id: "u1"}},
		{name: "item of another resource", in: `{"changeKind":{"resource":"nic"},"changedResourceId":"m"}`,
			want: changefeedFrame{resource: "nic", id: "m"}},
		{name: "no id", in: `{"changeKind":{"resource":"vm"}}`, wantErr: true},
		{name: "empty id", in: `{"changedResourceId":""}`, wantErr: true},
		{name: "id not a string", in: `{"changedResourceId":5}`, wantErr: true},
		{name: "changeKind not an object", in: `{"changeKind":"vm","changedResourceId":"u"}`, wantErr: true},
		{name: "text", in: `heartbeat`, wantErr: true},
		{name: "array", in: `[]`, wantErr: true},
		{name: "null", in: `null`, wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := decodeFrame([]byte(tt.in))
			if (err != nil) != tt.wantErr {
				t.Fatalf("decodeFrame error = %v, want error %v", err, tt.wantErr)
			}
			if err == nil && got != tt.want {
				t.Errorf("decodeFrame = %+v, want %+v", got, tt.want)
			}
		})
	}
}

// FuzzChangefeedFrame: no input panics, and a decoded frame is either a
// bootstrap or an item with an id.
func FuzzChangefeedFrame(f *testing.F) {
	for _, s := range []string{
		`{"resource":"vm","subResources":["alias"],"bootstrapRoute":"/vms"}`,
		`{"bootstrapRoutes":[]}`,
		`{"changeKind":{"resource":"vm","subResources":["tags"]},"changedResourceId":"u1","published":"1"}`,
		`{"changedResourceId":""}`, `heartbeat`, `null`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		fr, err := decodeFrame(b)
		if err == nil && !fr.bootstrap && fr.id == "" {
			t.Errorf("decodeFrame(%q) = %+v: neither a bootstrap nor an item with an id", b, fr)
		}
	})
}
