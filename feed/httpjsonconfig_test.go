package feed

import (
	"testing"
	"time"

	"github.com/cnsd/cnsd/schema"
)

func TestOptionsFromConfig(t *testing.T) {
	c, err := schema.Parse([]byte(`{
		"my_name": "ns1.example.com", "hostmaster": "hostmaster@example.com",
		"forward_zones": {"dc1.cns.example.com": {"networks": ["*"]}},
		"cnapi_opts": {"address": "cnapi.dc1.example.com", "poll_seconds": 15},
		"napi_opts": {"address": "napi.dc1.example.com", "url": "http://10.99.99.10:80/", "cache_seconds": 90}
	}`))
	if err != nil {
		t.Fatal(err)
	}
	co := CNAPIOptionsFrom(c)
	if co.URL != "http://cnapi.dc1.example.com" || co.PollInterval != 15*time.Second ||
		co.Down.HeartbeatLimit != time.Hour || co.Down.BootGrace != 120*time.Second {
		t.Errorf("CNAPIOptionsFrom = %+v", co)
	}
	no := NAPIOptionsFrom(c)
	if no.URL != "http://10.99.99.10:80/" || no.CacheTTL != 90*time.Second {
		t.Errorf("NAPIOptionsFrom = %+v", no)
	}
	if got := NewNAPI(no).rest.base; got != "http://10.99.99.10:80" {
		t.Errorf("NAPI base URL %q, want the trailing slash gone", got)
	}
}
