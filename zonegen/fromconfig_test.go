package zonegen

import (
	"reflect"
	"testing"
	"time"

	"github.com/cnsd/cnsd/schema"
)

func TestConfigFrom(t *testing.T) {
	c, err := schema.Parse([]byte(`{
		"my_name": "ns1.example.com", "hostmaster": "hostmaster@example.com",
		"use_login": true, "require_status_up": true,
		"compute_nodes": {"heartbeat_limit_seconds": 600},
		"forward_zones": {
			"z.example.com": {"networks": ["3484af3e-23db-4c63-8940-bf3e006347f3"]},
			"a.example.com": {"networks": ["*"]}
		}}`))
	if err != nil {
		t.Fatal(err)
	}
	want := Config{UseLogin: true, Zones: []ZoneConfig{
		{Name: "z.example.com", Networks: []string{"3484af3e-23db-4c63-8940-bf3e006347f3"}},
		{Name: "a.example.com", Networks: []string{"*"}},
	}}
	if got := ConfigFrom(c); !reflect.DeepEqual(got, want) {
		t.Errorf("ConfigFrom = %+v, want %+v", got, want)
	}
	wantOpts := DecideOptions{RequireStatusUp: true, HeartbeatLimit: 10 * time.Minute, BootGrace: 120 * time.Second}
	if got := DecideOptionsFrom(c); got != wantOpts {
		t.Errorf("DecideOptionsFrom = %+v, want %+v", got, wantOpts)
	}
}
