package feed

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/cnsd/cnsd/zonegen"
)

func TestDecodeServers(t *testing.T) {
	boot := time.Date(2026, 2, 1, 8, 0, 0, 0, time.UTC)
	tests := []struct {
		name    string
		body    string
		want    []zonegen.Server
		bad     []string // ids of the skipped entries
		wantErr bool
	}{
		{name: "cnapi shape",
			body: `[{"uuid":"a","hostname":"cn01","status":"running","setup":true,"headnode":false,
				"last_boot":"2026-02-01T08:00:00.000Z","last_heartbeat":"2026-02-01T08:00:00Z",
				"sysinfo":{"Boot Time":"1769932800"},"ram":262144}]`,
			want: []zonegen.Server{{UUID: "a", Hostname: "cn01", Status: "running", Setup: true, LastBoot: boot, LastHeartbeat: boot}}},
		{name: "never heartbeated",
			body: `[{"uuid":"a","status":"unknown","setup":true,"last_boot":null,"last_heartbeat":null}]`,
			want: []zonegen.Server{{UUID: "a", Status: "unknown", Setup: true}}},
		{name: "fields left out", body: `[{"uuid":"a"}]`, want: []zonegen.Server{{UUID: "a"}}},
		{name: "string setup and epoch milliseconds",
			body: `[{"uuid":"a","setup":"true","last_boot":1769932800000,"last_heartbeat":""}]`,
			want: []zonegen.Server{{UUID: "a", Setup: true, LastBoot: boot}}},
		{name: "offset timestamp",
			body: `[{"uuid":"a","last_boot":"2026-02-01T09:00:00+01:00"}]`,
			want: []zonegen.Server{{UUID: "a", LastBoot: boot}}},
		{name: "malformed entries skipped",
			body: `[{"uuid":"a"},{"uuid":"b","setup":"maybe"},{"hostname":"x"},{"uuid":"c","last_boot":"yesterday"},
				{"uuid":7},"text",null,{"uuid":"d","status":5}]`,
			want: []zonegen.Server{{UUID: "a"}}, bad: []string{"b", "", "c", "", "", "", "d"}},
		{name: "empty", body: `[]`},
		{name: "not a list", body: `{"code":"InternalError"}`, wantErr: true},
		{name: "not json", body: `<html>`, wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, bad, err := decodeServers([]byte(tt.body))
			if (err != nil) != tt.wantErr {
				t.Fatalf("err = %v, want error %v", err, tt.wantErr)
			}
			if len(got) != len(tt.want) {
				t.Fatalf("got %+v, want %+v", got, tt.want)
			}
			for i := range got {
				if got[i] != tt.want[i] {
					t.Errorf("server %d = %+v, want %+v", i, got[i], tt.want[i])
				}
			}
			if len(bad) != len(tt.bad) {
				t.Fatalf("bad = %+v, want ids %q", bad, tt.bad)
			}
			for i, b := range bad {
				if b.ID != tt.bad[i] || b.Err == nil {
					t.Errorf("bad %d = %+v, want id %q with an error", i, b, tt.bad[i])
				}
			}
		})
	}
}

// FuzzDecodeServers checks that any CNAPI answer decodes without panicking
// and that every server it keeps has the uuid it is keyed by.
func FuzzDecodeServers(f *testing.F) {
	for _, s := range []string{
		`[{"uuid":"a","hostname":"cn01","status":"running","setup":true,"last_boot":"2026-02-01T08:00:00.000Z","last_heartbeat":null}]`,
		`[{"uuid":"a","setup":"true","last_boot":1769932800000}]`,
		`[{"uuid":"b","setup":"maybe"},{"hostname":"x"},null,"text",7]`,
		`{"code":"InternalError"}`, `[]`, ``,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		servers, bad, err := decodeServers(body)
		if err != nil && (servers != nil || bad != nil) {
			t.Fatalf("error %v with results", err)
		}
		for _, s := range servers {
			if s.UUID == "" {
				t.Fatalf("kept a server without uuid: %+v", s)
			}
			if _, err := json.Marshal(s); err != nil {
				t.Fatalf("kept a server zonegen cannot encode: %+v: %v", s, err)
			}
		}
		for _, b := range bad {
			if b.Err == nil {
				t.Fatalf("bad entry %q without an error", b.ID)
			}
		}
	})
}
