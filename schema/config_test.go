package schema

import (
	"errors"
	"log/slog"
	"net/netip"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"
)

// badFiles maps each testdata/*.bad.json file to the exact error it must
// produce.
var badFiles = map[string]string{
	"api_both.bad.json":                             `config: both "api_server" and "api" are set; use only "api"`,
	"api_auth_none_with_token.bad.json":             `config: api.token: is set but auth is "none", which lets every request in; remove one of them`,
	"api_server_auth_none_with_token_file.bad.json": `config: api_server.token_file: is set but auth is "none", which lets every request in; remove one of them`,
	"api_read_token_is_token.bad.json":              `config: api.read_token: must differ from token, which opens every route (value not shown)`,
	"api_bad_auth.bad.json":                         `config: api.auth: must be one of "token", "writes", "none", got "open"`,
	"api_empty_token_file.bad.json":                 `config: api.token_file: must be a file name, got ""`,
	"bad_allow_transfer.bad.json":                   `config: allow_transfer[2]: must be an IP address or a CIDR prefix, got "ns0.example.com"`,
	"bad_cidr.bad.json":                             `config: forward_zones["a.example.com"].allow_transfer[0]: must be an IP address or a CIDR prefix, got "10.0.0.0/33"`,
	"bad_hostmaster.bad.json":                       `config: hostmaster: must be an e-mail address user@domain whose domain is a valid host name, got "hostmaster.example.com"`,
	"bad_listen.bad.json":                           `config: dns.listen[0]: must be an address and port such as "127.0.0.1:53" or "[::1]:53", got "127.0.0.1"`,
	"bad_my_name.bad.json":                          `config: my_name: must be a valid host name (labels of 1 to 63 letters, digits or '-', not starting or ending with '-', 253 characters at most), got "-ns1.example.com"`,
	"bad_network.bad.json":                          `config: forward_zones["a.example.com"].networks[0]: must be a network or network pool UUID, or "*", got "3484af3e-23db-4c63-8940"`,
	"bad_peer.bad.json":                             `config: forward_zones["a.example.com"].peers[1]: must be an IP address or a valid host name, optionally with :port, got "ns_1.example.com"`,
	"bad_redis_url.bad.json":                        `config: store.redis: must be a URL with scheme redis, rediss or unix (value not shown)`,
	"bad_url.bad.json":                              `config: vmapi_opts.url: must be an absolute URL, got "vmapi.example.com"`,
	"both_peer_spellings.bad.json":                  `config: forward_zones["a.example.com"]: both "slaves" and "peers" are set; use only "peers"`,
	"both_zone_spellings.bad.json":                  `config: both "dns_zones" and "forward_zones" are set; use only "forward_zones"`,
	"coalesce_window.bad.json":                      `config: coalesce.window_ms: must not exceed max_delay_ms (200), got 500`,
	"duplicate_key.bad.json":                        `config: forward_zones: duplicate key "a.example.com"`,
	"duplicate_network.bad.json":                    `config: forward_zones["a.example.com"].networks[1]: duplicate network "3484af3e-23db-4c63-8940-bf3e006347f3"`,
	"empty.bad.json":                                `config: file is empty`,
	"empty_forward_zones.bad.json":                  `config: forward_zones: must list at least one zone, got an empty object`,
	"empty_networks.bad.json":                       `config: forward_zones["a.example.com"].networks: must list at least one network, got an empty array`,
	"fractional_integer.bad.json":                   `config: hysteresis.divisor: must be an integer, got 2.5`,
	"hidden_primary_no_peers.bad.json":              `config: forward_zones["a.example.com"].hidden_primary: true needs a non-empty peers list`,
	"huge_number.bad.json":                          `config: journal.max_bytes: number out of range, got 1e400`,
	"invalid_zone.bad.json":                         `config: forward_zones["a..example.com"]: zone name must be a valid DNS name (labels of 1 to 63 letters, digits or '-', not starting or ending with '-', 253 characters at most), got "a..example.com"`,
	"mass_delete_share.bad.json":                    `config: mass_delete_share: must be greater than 0 and at most 1, got 1.5`,
	"mass_delete_share_zero.bad.json":               `config: mass_delete_share: must be greater than 0 and at most 1, got 0`,
	"missing_my_name.bad.json":                      `config: my_name: required key is missing`,
	"missing_networks.bad.json":                     `config: forward_zones["a.example.com"].networks: required key is missing`,
	"not_object.bad.json":                           `config: must be an object, got an array`,
	"require_tsig_without_key.bad.json":             `config: forward_zones["a.example.com"].require_tsig: true needs tsig_key`,
	"catalog_is_forward_zone.bad.json":              `config: catalog_zone.name: "cat.example.com" is also a forward zone; the catalog zone needs a name of its own`,
	"catalog_unknown_key.bad.json":                  `config: catalog_zone: unknown key "hidden_primary"`,
	"reverse_hidden_primary_no_peers.bad.json":      `config: reverse_zones.hidden_primary: true needs a non-empty peers list`,
	"reverse_zone_name.bad.json":                    `config: forward_zones["2.0.192.in-addr.arpa"]: zone name must not be under in-addr.arpa or ip6.arpa (reverse zones are generated), got "2.0.192.in-addr.arpa"`,
	"syntax.bad.json":                               `config: line 3, column 60: invalid character '}' looking for beginning of object key string`,
	"too_deep.bad.json":                             `config: redis_opts` + strings.Repeat(`["a"]`, 31) + `: nested deeper than 32 levels`,
	"trailing_data.bad.json":                        `config: line 5, column 1: invalid character '{' after top-level value`,
	"trailing_dot_zone.bad.json":                    `config: forward_zones["example.com."]: zone name must not end with a dot, got "example.com."`,
	"truncated.bad.json":                            `config: line 4, column 1: unexpected end of input`,
	"tsig_bad_algorithm.bad.json":                   `config: tsig_keys["xfr-key"].algorithm: must be one of "hmac-md5", "hmac-sha1", "hmac-sha224", "hmac-sha256", "hmac-sha384", "hmac-sha512", got "hmac-sha3"`,
	"tsig_bad_secret.bad.json":                      `config: tsig_keys["xfr-key"].secret: must be standard base64 of at least one byte (value not shown)`,
	"tsig_key_name.bad.json":                        `config: tsig_keys["XFR-Key"]: key name must be a lower-case DNS name without a trailing dot, got "XFR-Key"`,
	"tsig_secret_type.bad.json":                     `config: tsig_keys["xfr-key"].secret: must be a string (value not shown)`,
	"tsig_unknown_key.bad.json":                     `config: forward_zones["a.example.com"].tsig_key: no key "xfr-key" in tsig_keys`,
	"ttl_zero.bad.json":                             `config: ttl.record: must be at least 1, got 0`,
	"two_catch_alls.bad.json":                       `config: forward_zones["b.example.com"].networks[1]: "*" makes a second catch-all zone; "a.example.com" is already the catch-all zone`,
	"unknown_key.bad.json":                          `config: unknown key "use_aliases"`,
	"unknown_nested_key.bad.json":                   `config: ttl: unknown key "soa_min"`,
	"unknown_zone_key.bad.json":                     `config: forward_zones["a.example.com"]: unknown key "netwroks"`,
	"upper_case_zone.bad.json":                      `config: forward_zones["Example.COM"]: zone name must be lower-case, got "Example.COM"`,
	"wrong_type.bad.json":                           `config: use_alias: must be a boolean, got "yes"`,
	"log_level.bad.json":                            `config: log.level: must be one of "debug", "info", "warn", "error", got "verbose"`,
	"log_format.bad.json":                           `config: log.format: must be one of "text", "json", got "logfmt"`,
	"rrl_slip.bad.json":                             `config: rrl.slip: must be at most 10, got 11`,
	"udp_max_payload.bad.json":                      `config: dns.udp_max_payload: must be at least 512, got 256`,
	"rrl_exempt.bad.json":                           `config: rrl.exempt[0]: must be an IP address or a CIDR prefix, got "192.0.2.0/33"`,
	"learn_peers_zero.bad.json":                     `config: learn_peers.after_transfers: must be at least 1, got 0`,
}

func TestParseBad(t *testing.T) {
	for name, want := range badFiles {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			c, err := Parse(readFile(t, filepath.Join("testdata", name)))
			if err == nil {
				t.Fatalf("Parse succeeded: %+v", c)
			}
			if got := err.Error(); got != want {
				t.Errorf("error\n got: %s\nwant: %s", got, want)
			}
			if !errors.Is(err, ErrInvalid) {
				t.Errorf("error does not wrap ErrInvalid: %v", err)
			}
			if c != nil {
				t.Errorf("Parse returned a Config with an error")
			}
		})
	}
}

// TestEveryBadFileHasACase fails when a testdata/*.bad.json file has no
// entry in badFiles, or an entry has no file.
func TestEveryBadFileHasACase(t *testing.T) {
	files, err := filepath.Glob("testdata/*.bad.json")
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	for _, f := range files {
		name := filepath.Base(f)
		seen[name] = true
		if _, ok := badFiles[name]; !ok {
			t.Errorf("%s has no entry in badFiles", f)
		}
	}
	for name := range badFiles {
		if !seen[name] {
			t.Errorf("badFiles entry %s has no file in testdata", name)
		}
	}
	if len(files) < 20 {
		t.Errorf("only %d bad files", len(files))
	}
}

func TestParseMinimal(t *testing.T) {
	c := mustLoad(t, "testdata/minimal.good.json")
	want := &Config{
		MyName:       "ns1.example.com",
		Hostmaster:   "hostmaster@example.com",
		ForwardZones: []Zone{{Name: "dc1.cns.example.com", Networks: []string{"*"}}},
		CatalogZone:  CatalogZone{Name: "catalog.cnsd.invalid"},
		Store:        StoreConfig{Path: "/var/db/cnsd/cnsd.db"},
		DNS: DNSConfig{Listen: []string{"127.0.0.1:53"}, UDPMaxPayload: 1232, UDPReceiveBuffer: 4 << 20,
			UDPSendBuffer: 4 << 20, TCPIdleTimeout: 10 * time.Second, TCPMaxConnections: 1000, TCPMaxConnectionsPerClient: 100},
		API: APIConfig{Listen: []string{"127.0.0.1:8080"}, Auth: AuthToken, MetricsAuth: AuthToken,
			TokenFile: "/var/db/cnsd/api.token", key: "api"},
		TTL: TTLConfig{Record: 30 * time.Second, NS: time.Hour, SOARefresh: time.Hour,
			SOARetry: 10 * time.Minute, SOAExpire: 7 * 24 * time.Hour, SOAMinimum: 30 * time.Second},
		Hysteresis:   HysteresisConfig{Window: time.Minute, Divisor: 3, LastMemberDelay: 10 * time.Minute},
		Coalesce:     CoalesceConfig{Window: 0, MaxDelay: 200 * time.Millisecond},
		Journal:      JournalConfig{MaxEntries: 100, MaxBytes: 16 << 20},
		ComputeNodes: ComputeNodeConfig{HeartbeatLimit: time.Hour, BootGrace: 120 * time.Second},
		LearnPeers:   LearnPeersConfig{AfterTransfers: 3, ForgetAfter: 24 * time.Hour},
		RRL: RRLConfig{ResponsesPerSecond: 20, Window: 15 * time.Second, Slip: 2,
			IPv4PrefixLength: 24, IPv6PrefixLength: 56, TableSize: 65536},
		Log:             LogConfig{Level: slog.LevelInfo, Format: "text"},
		MassDeleteShare: 0.25,
		RRsetWarn:       100,
		TSIGKeys:        map[string]TSIGKey{},
		VMAPI:           VMAPIConfig{Limit: 500},
		UFDS:            UFDSConfig{CacheTime: 5 * time.Minute},
		CNAPI:           CNAPIConfig{PollInterval: time.Minute},
		NAPI:            NAPIConfig{CacheTime: 5 * time.Minute},
		Changefeed: ChangefeedConfig{Resource: "vm", SubResources: []string{"alias", "customer_metadata",
			"destroyed", "internal_metadata", "nics", "owner_uuid", "server_uuid", "state", "tags"}},
	}
	if !reflect.DeepEqual(c, want) {
		t.Errorf("minimal config\n got: %+v\nwant: %+v", c, want)
	}
}

func TestParseFull(t *testing.T) {
	c := mustLoad(t, "testdata/full.good.json")
	checks := []struct {
		name      string
		got, want any
	}{
		{"zone order", zoneNames(c), []string{"zz.example.com", "aa.example.com", "b.aa.example.com"}},
		{"networks lower-cased", c.ForwardZones[0].Networks,
			[]string{"3484af3e-23db-4c63-8940-bf3e006347f3", "a1b2c3d4-0000-4000-8000-000000000001"}},
		{"peers lower-cased", c.ForwardZones[0].Peers, []string{"ns0.example.com", "192.0.2.53", "2001:db8::53"}},
		{"hidden primary", c.ForwardZones[0].HiddenPrimary, true},
		{"zone allow_transfer", c.ForwardZones[0].AllowTransfer, prefixList("198.51.100.0/24", "2001:db8:1::/48")},
		{"zone tsig", [2]any{c.ForwardZones[0].TSIGKey, c.ForwardZones[0].RequireTSIG}, [2]any{"xfr-key", true}},
		{"reverse zones", c.ReverseZones, ZoneAccess{Peers: []string{"ns0.example.com"}, HiddenPrimary: true,
			AllowTransfer: prefixList("203.0.113.7/32"), TSIGKey: "xfr-key"}},
		{"allow_transfer", c.AllowTransfer, prefixList("127.0.0.1/32", "10.0.0.0/8", "::1/128", "10.1.0.0/16")},
		{"flags", [3]bool{c.UseAlias, c.UseLogin, c.RequireStatusUp}, [3]bool{true, true, true}},
		{"store", c.Store, StoreConfig{Redis: "redis://:secret@127.0.0.1:6379/2", RedisAcceptNoAOF: true, Path: "/var/tmp/cnsd.db"}},
		{"dns", c.DNS, DNSConfig{Listen: []string{"192.0.2.1:53", "[2001:db8::1]:5353"}, UDPMaxPayload: 1400,
			UDPReceiveBuffer: 8 << 20, UDPSendBuffer: 1 << 20, TCPIdleTimeout: 30 * time.Second, TCPMaxQueries: 500,
			TCPMaxConnections: 200, TCPMaxConnectionsPerClient: 20}},
		{"api", c.API, APIConfig{Listen: []string{"[::1]:8081"}, Auth: AuthWrites, Token: "s3cret-token",
			TokenFile: filepath.Join("testdata", "secrets", "api.token"), ReadToken: "r3ad-token", MetricsAuth: AuthNone,
			key: "api", tokenFileSet: true}},
		{"ttl", c.TTL, TTLConfig{Record: time.Minute, NS: 2 * time.Hour, SOARefresh: 30 * time.Minute,
			SOARetry: 5 * time.Minute, SOAExpire: 14 * 24 * time.Hour}},
		{"hysteresis", c.Hysteresis, HysteresisConfig{Window: 2 * time.Minute, Divisor: 4, LastMemberDelay: 15 * time.Minute}},
		{"coalesce (1e2 is an integer)", c.Coalesce, CoalesceConfig{Window: 10 * time.Millisecond, MaxDelay: 100 * time.Millisecond}},
		{"journal", c.Journal, JournalConfig{MaxEntries: 50, MaxBytes: 1 << 20}},
		{"compute nodes", c.ComputeNodes, ComputeNodeConfig{HeartbeatLimit: 30 * time.Minute}},
		{"mass delete", c.MassDeleteShare, 1.0},
		{"large RRsets", [2]int{c.RRsetWarn, c.MaxSvcMembers}, [2]int{500, 64}},
		{"log", c.Log, LogConfig{Level: slog.LevelDebug, Format: "json"}},
		{"learn peers", c.LearnPeers, LearnPeersConfig{Enabled: true, AfterTransfers: 2, ForgetAfter: time.Hour}},
		{"rrl", c.RRL, RRLConfig{Disabled: true, ResponsesPerSecond: 50, Window: 5 * time.Second, Slip: 0,
			IPv4PrefixLength: 32, IPv6PrefixLength: 64, TableSize: 4096, Exempt: prefixList("192.0.2.0/24", "2001:db8::53/128")}},
		{"tsig keys", c.TSIGKeys, map[string]TSIGKey{
			"xfr-key":   {Algorithm: "hmac-sha512", Secret: "c2VjcmV0IGtleSBmb3IgdHJhbnNmZXJz"},
			"other.key": {Algorithm: "hmac-sha256", Secret: "AAEC"},
		}},
		{"ufds", c.UFDS, UFDSConfig{Endpoint: Endpoint{"ufds.dc1.example.com", "ldaps://ufds.dc1.example.com:636"},
			BindDN: "cn=root", BindPassword: "hunter2", CacheTime: 2 * time.Minute}},
		{"cnapi", c.CNAPI, CNAPIConfig{Endpoint{"cnapi.dc1.example.com", "http://10.99.99.22"}, 30 * time.Second}},
		{"napi", c.NAPI, NAPIConfig{Endpoint{"napi.dc1.example.com", "http://10.99.99.10:80/"}, 10 * time.Minute}},
		{"vmapi", c.VMAPI, VMAPIConfig{Endpoint{"vmapi.dc1.example.com", "http://10.99.99.27"}, 1000}},
		{"changefeed", c.Changefeed, ChangefeedConfig{Resource: "vm", SubResources: []string{"nics", "state"},
			Instance: "0f3c1a8e-5f0e-4a57-9a57-5a1b2e7c9d00"}},
		{"legacy", c.Legacy, LegacyConfig{FullPollInterval: 10 * time.Second, ReaperPollInterval: 5 * time.Minute,
			MinNotifyInterval: 2500500 * time.Microsecond, RedisOpts: map[string]any{"host": "127.0.0.1", "port": 6379.0},
			BinderDomain: "binder.dc1.example.com", Mahi: Endpoint{Address: "mahi.dc1.example.com"}}},
	}
	for _, tc := range checks {
		t.Run(tc.name, func(t *testing.T) {
			if !reflect.DeepEqual(tc.got, tc.want) {
				t.Errorf("got %+v, want %+v", tc.got, tc.want)
			}
		})
	}
}

// TestParseTriton loads a file rendered from the shipped Triton CNS SAPI
// template: every legacy key must be accepted and kept.
func TestParseTriton(t *testing.T) {
	c := mustLoad(t, "testdata/triton.good.json")
	checks := []struct {
		name      string
		got, want any
	}{
		{"zones", zoneNames(c), []string{"us-east-1.cns.example.com"}},
		{"reverse zones default", c.ReverseZones, ZoneAccess{}},
		{"allow_transfer", c.AllowTransfer, prefixList("10.99.99.0/24", "127.0.0.1/32")},
		{"api from api_server", c.API, APIConfig{Listen: []string{"10.99.99.40:80", "127.0.0.1:80"}, Auth: AuthToken,
			MetricsAuth: AuthToken, TokenFile: "/var/db/cnsd/api.token", key: "api_server"}},
		{"ufds", c.UFDS, UFDSConfig{Endpoint: Endpoint{Address: "ufds.us-east-1.example.com"},
			BindDN: "cn=root", BindPassword: "secret", CacheTime: 5 * time.Minute}},
		{"vmapi", c.VMAPI, VMAPIConfig{Endpoint{Address: "vmapi.us-east-1.example.com"}, 500}},
		{"changefeed instance", c.Changefeed.Instance, "5e2f1c7a-7d1e-4e38-8f7e-6c3d8b9a0e11"},
		{"legacy", c.Legacy, LegacyConfig{FullPollInterval: 10 * time.Second, ReaperPollInterval: 5 * time.Minute,
			MinNotifyInterval: time.Second, RedisOpts: map[string]any{}, BinderDomain: "binder.us-east-1.example.com",
			Mahi: Endpoint{Address: "mahi.us-east-1.example.com"}}},
	}
	for _, tc := range checks {
		t.Run(tc.name, func(t *testing.T) {
			if !reflect.DeepEqual(tc.got, tc.want) {
				t.Errorf("got %+v, want %+v", tc.got, tc.want)
			}
		})
	}
}

// TestParseRFD1 loads a file in the RFD 1 spelling.
func TestParseRFD1(t *testing.T) {
	c := mustLoad(t, "testdata/rfd1.good.json")
	want := []Zone{
		{Name: "triton-hosted.io", Networks: []string{"3484af3e-23db-4c63-8940-bf3e006347f3"},
			ZoneAccess: ZoneAccess{Peers: []string{"ns0.joyent.com", "ns1.joyent.com"}, HiddenPrimary: true}},
		{Name: "tcns.joyent.us", Networks: []string{"*"}},
	}
	if !reflect.DeepEqual(c.ForwardZones, want) {
		t.Errorf("zones\n got: %+v\nwant: %+v", c.ForwardZones, want)
	}
	wantReverse := ZoneAccess{Peers: []string{"ns0.joyent.com", "ns1.joyent.com"}, HiddenPrimary: true}
	if !reflect.DeepEqual(c.ReverseZones, wantReverse) {
		t.Errorf("reverse zones: got %+v, want %+v", c.ReverseZones, wantReverse)
	}
	if !c.UseAlias || !c.UseLogin {
		t.Errorf("use_alias, use_login = %v, %v; want true, true", c.UseAlias, c.UseLogin)
	}
}

func TestZoneLookup(t *testing.T) {
	c := mustLoad(t, "testdata/full.good.json")
	tests := []struct {
		name, zone string
		found      bool
	}{
		{"exact", "zz.example.com", true},
		{"case-insensitive", "ZZ.Example.COM", true},
		{"trailing dot", "b.aa.example.com.", true},
		{"absent", "example.com", false},
		{"empty", "", false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			z, ok := c.Zone(tc.zone)
			if ok != tc.found {
				t.Fatalf("Zone(%q) found = %v, want %v", tc.zone, ok, tc.found)
			}
			if ok && !strings.EqualFold(z.Name, strings.TrimSuffix(tc.zone, ".")) {
				t.Errorf("Zone(%q) = %q", tc.zone, z.Name)
			}
		})
	}
}

func TestCatchAll(t *testing.T) {
	tests := []struct {
		file, want string
	}{
		{"testdata/full.good.json", "aa.example.com"},
		{"testdata/rfd1.good.json", "tcns.joyent.us"},
	}
	for _, tc := range tests {
		t.Run(filepath.Base(tc.file), func(t *testing.T) {
			z, ok := mustLoad(t, tc.file).CatchAll()
			if !ok || z.Name != tc.want || !z.CatchAll() {
				t.Errorf("CatchAll() = %q, %v; want %q", z.Name, ok, tc.want)
			}
		})
	}
	c := &Config{ForwardZones: []Zone{{Name: "a.example.com", Networks: []string{"x"}}}}
	if z, ok := c.CatchAll(); ok {
		t.Errorf("CatchAll() of a config without one = %q", z.Name)
	}
}

func TestLoadErrors(t *testing.T) {
	name := filepath.Join("testdata", "wrong_type.bad.json")
	_, err := Load(name)
	want := `config: ` + name + `: use_alias: must be a boolean, got "yes"`
	if err == nil || err.Error() != want {
		t.Errorf("Load error = %v, want %s", err, want)
	}
	var e *Error
	if !errors.As(err, &e) || e.File != name || e.Path != "use_alias" {
		t.Errorf("Load error is not an *Error with File and Path: %#v", err)
	}

	missing := filepath.Join(t.TempDir(), "absent.json")
	_, err = Load(missing)
	if err == nil || !strings.HasPrefix(err.Error(), "config: ") || !strings.Contains(err.Error(), missing) {
		t.Errorf("Load of a missing file: %v", err)
	}
	if errors.Is(err, ErrInvalid) || !errors.Is(err, os.ErrNotExist) {
		t.Errorf("Load of a missing file should wrap os.ErrNotExist, not ErrInvalid: %v", err)
	}
}

// TestConfigSchema checks that ConfigSchema returns a copy.
func TestConfigSchema(t *testing.T) {
	a := ConfigSchema()
	a[0] = 'x'
	if b := ConfigSchema(); b[0] != '{' {
		t.Errorf("ConfigSchema shares its bytes with callers")
	}
}

func mustLoad(t *testing.T, name string) *Config {
	t.Helper()
	c, err := Load(name)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func readFile(t *testing.T, name string) []byte {
	t.Helper()
	data, err := os.ReadFile(name)
	if err != nil {
		t.Fatal(err)
	}
	return data
}

func zoneNames(c *Config) []string {
	var names []string
	for _, z := range c.ForwardZones {
		names = append(names, z.Name)
	}
	return names
}

func prefixList(ss ...string) []netip.Prefix {
	var ps []netip.Prefix
	for _, s := range ss {
		ps = append(ps, netip.MustParsePrefix(s))
	}
	return slices.Clip(ps)
}

// TestTokenFile checks where Load keeps the API token: beside the
// embedded store's file, beside the configuration file for a Redis
// store, and a relative token_file under the configuration file's
// directory.
func TestTokenFile(t *testing.T) {
	const head = `{"my_name": "ns1.example.com", "hostmaster": "hostmaster@example.com",
  "forward_zones": {"a.example.com": {"networks": ["*"]}}, `
	tests := []struct {
		name, body, want string
	}{
		{"embedded store", `"store": {"path": "/var/db/cnsd/cnsd.db"}`, "/var/db/cnsd/api.token"},
		{"relative store path", `"store": {"path": "data/cnsd.db"}`, "data/api.token"},
		{"redis", `"store": {"redis": "redis://127.0.0.1:6379"}`, "CONFIGDIR/api.token"},
		{"absolute token_file", `"api": {"token_file": "/etc/cnsd/secret"}`, "/etc/cnsd/secret"},
		{"relative token_file", `"store": {"redis": "redis://127.0.0.1:6379"}, "api": {"token_file": "s/api.token"}`, "CONFIGDIR/s/api.token"},
		{"api_server", `"api_server": {"listen": ["127.0.0.1"], "token_file": "t"}`, "CONFIGDIR/t"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			name := filepath.Join(dir, "cnsd.json")
			if err := os.WriteFile(name, []byte(head+tt.body+"}"), 0o644); err != nil {
				t.Fatal(err)
			}
			c := mustLoad(t, name)
			if want := strings.Replace(tt.want, "CONFIGDIR", dir, 1); c.API.TokenFile != want {
				t.Errorf("token file %q, want %q", c.API.TokenFile, want)
			}
		})
	}
}
