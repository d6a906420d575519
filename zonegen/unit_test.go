package zonegen

import (
	"net/netip"
	"reflect"
	"testing"
	"time"
)

func TestDnsify(t *testing.T) {
	tests := map[string]string{
		"web0":                                   "web0",
		"Web Server #1":                          "web-server-1",
		"My Fabric":                              "my-fabric",
		"SDC-Customer-Public-Pool-72.2.118.0/23": "sdc-customer-public-pool-72-2-118-0-23",
		"a__b..c":                                "a-b-c",
		"Ünïcode":                                "-n-code",
		"":                                       "",
		"--":                                     "--",
	}
	for in, want := range tests {
		if got := Dnsify(in); got != want {
			t.Errorf("Dnsify(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestIsHostName(t *testing.T) {
	tests := map[string]bool{
		"mail.example.org": true, "mail.example.org.": false, "a": true, "1x.example": true,
		"": false, ".": false, "a..b": false, "-a.example": false, "a_b.example": false,
		"not a host": false, string(make([]byte, 64)): false,
	}
	for in, want := range tests {
		if got := IsHostName(in); got != want {
			t.Errorf("IsHostName(%q) = %v, want %v", in, got, want)
		}
	}
}

func TestQuoteTXT(t *testing.T) {
	long := make([]byte, 300)
	for i := range long {
		long[i] = 'x'
	}
	tests := map[string]string{
		"abc":        `"abc"`,
		`a"b\c`:      `"a\"b\\c"`,
		"tab\there":  `"tab\009here"`,
		"":           `""`,
		string(long): `"` + string(long[:255]) + `" "` + string(long[255:]) + `"`,
	}
	for in, want := range tests {
		if got := QuoteTXT(in); got != want {
			t.Errorf("QuoteTXT(%q) = %s, want %s", in, got, want)
		}
	}
}

func TestReverseName(t *testing.T) {
	tests := []struct{ ip, zone, name string }{
		{"10.1.2.3", "2.1.10.in-addr.arpa", "3.2.1.10.in-addr.arpa."},
		{"192.168.128.0", "128.168.192.in-addr.arpa", "0.128.168.192.in-addr.arpa."},
		{"2001:db8::1", "0.0.0.0.0.0.0.0.8.b.d.0.1.0.0.2.ip6.arpa",
			"1.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.8.b.d.0.1.0.0.2.ip6.arpa."},
	}
	for _, tt := range tests {
		zone, name := ReverseName(netip.MustParseAddr(tt.ip))
		if zone != tt.zone || name != tt.name {
			t.Errorf("ReverseName(%s) = %s, %s; want %s, %s", tt.ip, zone, name, tt.zone, tt.name)
		}
	}
}

func TestZonesFor(t *testing.T) {
	g := NewGenerator(Config{Zones: []ZoneConfig{
		{Name: "a.example", Networks: []string{"N1", "p1"}},
		{Name: "b.example", Networks: []string{"*"}},
		{Name: "c.example", Networks: []string{"p1", "n2"}},
	}})
	tests := []struct {
		name  string
		nic   NIC
		pools []string
		want  []int
	}{
		{"network and its pool count once", NIC{NetworkUUID: "n1"}, []string{"p1"}, []int{0, 2}},
		{"case-insensitive uuid", NIC{NetworkUUID: "N2"}, nil, []int{2}},
		{"pool only", NIC{NetworkUUID: "n9"}, []string{"p1"}, []int{0, 2}},
		{"catch-all", NIC{NetworkUUID: "n9"}, nil, []int{1}},
		{"no network uuid", NIC{}, nil, []int{1}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := g.zonesFor(&tt.nic, &Network{Pools: tt.pools})
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("zonesFor = %v, want %v", got, tt.want)
			}
		})
	}
}

func TestServerDown(t *testing.T) {
	now := time.Date(2026, 11, 1, 12, 0, 0, 0, time.UTC)
	o := DefaultDecideOptions()
	up := Server{UUID: "cn", Status: "running", Setup: true, LastBoot: now.Add(-24 * time.Hour), LastHeartbeat: now.Add(-5 * time.Second)}
	tests := []struct {
		name string
		mod  func(*Server)
		down bool
	}{
		{"running", func(*Server) {}, false},
		{"not set up", func(s *Server) { s.Setup = false }, true},
		{"no heartbeat", func(s *Server) { s.LastHeartbeat = time.Time{} }, true},
		{"unknown, heartbeat exactly at the limit", func(s *Server) { s.Status = "unknown"; s.LastHeartbeat = now.Add(-time.Hour) }, false},
		{"unknown, heartbeat past the limit", func(s *Server) { s.Status = "unknown"; s.LastHeartbeat = now.Add(-time.Hour - time.Second) }, true},
		{"running with an old heartbeat", func(s *Server) { s.LastHeartbeat = now.Add(-3 * time.Hour) }, false},
		{"booted within grace", func(s *Server) { s.LastBoot = now.Add(-119 * time.Second) }, true},
		{"booted exactly at grace", func(s *Server) { s.LastBoot = now.Add(-120 * time.Second) }, false},
		{"no last_boot", func(s *Server) { s.LastBoot = time.Time{} }, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := up
			tt.mod(&s)
			if got, why := ServerDown(&s, o, now); got != tt.down {
				t.Errorf("ServerDown = %v (%s), want %v", got, why, tt.down)
			}
		})
	}
}

func TestHold(t *testing.T) {
	now := time.Date(2026, 11, 1, 12, 0, 0, 0, time.UTC)
	base := twinView("vm", "10.0.0.1")
	base.VM.Tags[TagServices] = "web,api"
	tests := []struct {
		name string
		mod  func(*View)
		hold bool
	}{
		{"self-reported down is held", func(v *View) { v.VM.CustomerMetadata = map[string]string{MetaStatus: "down"} }, true},
		{"stopped is never held", func(v *View) {
			v.VM.CustomerMetadata = map[string]string{MetaStatus: "down"}
			v.VM.State = "stopped"
		}, false},
		{"owner disabled is never held", func(v *View) {
			v.VM.CustomerMetadata = map[string]string{MetaStatus: "down"}
			v.Owner = &Account{UUID: "o1", Login: "alice"}
		}, false},
		{"listed service needs no hold", func(*View) {}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			v := base
			v.VM.Tags = map[string]any{TagServices: "web,api"}
			tt.mod(&v)
			d := Decide(&v, DefaultDecideOptions(), now)
			if got := d.Hold("web"); got != tt.hold {
				t.Fatalf("Hold = %v, want %v (decision %+v)", got, tt.hold, d)
			}
			if tt.hold && (!d.Services[0].Listed || d.Services[1].Listed) {
				t.Errorf("only web should be listed: %+v", d.Services)
			}
			if d.Hold("nosuch") {
				t.Error("Hold of an unknown service succeeded")
			}
		})
	}
}

// TestIsAdminNIC holds the NIC tags of Triton's netconfig library:
// ^admin(_rack_[A-Z0-9_-]+)?$ untagged and ^manta(_rack_[A-Z0-9_-]+)?$ at
// any VLAN, both case-insensitive.
func TestIsAdminNIC(t *testing.T) {
	tests := []struct {
		tag  string
		vlan int
		want bool
	}{
		{"admin", 0, true}, {"ADMIN", 0, true}, {"admin_rack_r1", 0, true}, {"Admin_Rack_A-1_b", 0, true},
		{"admin", 12, false}, {"admin_rack_r1", 3, false},
		{"admin_rack_", 0, false}, {"admin_rack_a.b", 0, false}, {"admin0", 0, false}, {"xadmin", 0, false},
		{"manta", 0, true}, {"Manta", 9, true}, {"manta_rack_r1", 0, true}, {"MANTA_RACK_X-2_b", 4, true},
		{"mantanat", 0, false}, {"manta_rack_", 0, false}, {"manta_rack_a b", 0, false}, {"manta_", 0, false},
		{"external", 0, false}, {"", 0, false},
	}
	for _, tt := range tests {
		if got := IsAdminNIC(&NIC{NICTag: tt.tag, VLANID: tt.vlan}); got != tt.want {
			t.Errorf("IsAdminNIC(nic_tag %q, vlan %d) = %v, want %v", tt.tag, tt.vlan, got, tt.want)
		}
	}
}
