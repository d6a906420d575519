package schema

import (
	"errors"
	"slices"
	"strings"
	"testing"
)

// TestErrorPaths covers how paths and values are written in messages,
// including keys that need escaping in the validator's JSON pointers.
func TestErrorPaths(t *testing.T) {
	head := `"my_name": "ns1.example.com", "hostmaster": "hostmaster@example.com", `
	zone := `"forward_zones": {"a.example.com": {"networks": ["*"]}}`
	tests := []struct {
		name, body, want string
	}{
		{"slash in zone name", `"forward_zones": {"a/b": {"networks": ["*"]}}`,
			`config: forward_zones["a/b"]: zone name must be a valid DNS name (labels of 1 to 63 letters, digits or '-', not starting or ending with '-', 253 characters at most), got "a/b"`},
		{"tilde in zone name", `"forward_zones": {"a~1": {"networks": ["x"]}}`,
			`config: 2 problems: forward_zones["a~1"]: zone name must be a valid DNS name (labels of 1 to 63 letters, digits or '-', not starting or ending with '-', 253 characters at most), got "a~1"; forward_zones["a~1"].networks[0]: must be a network or network pool UUID, or "*", got "x"`},
		{"value under an escaped key", `"forward_zones": {"a.example.com": {"networks": ["*"]}}, "redis_opts": 1`,
			`config: redis_opts: must be an object, got 1`},
		{"empty zone name", `"forward_zones": {"": {"networks": ["*"]}}`,
			`config: forward_zones: empty key`},
		{"empty key in redis_opts", zone + `, "redis_opts": {"a": {"": 1}}`, `config: redis_opts["a"]: empty key`},
		{"control character quoted", `"forward_zones": {"a.example.com": {"networks": ["\u0001"]}}`,
			`config: forward_zones["a.example.com"].networks[0]: must be a network or network pool UUID, or "*", got "\x01"`},
		{"name error before value error", `"forward_zones": {"A.example.com": {"networks": []}}`,
			`config: 2 problems: forward_zones["A.example.com"]: zone name must be lower-case, got "A.example.com"; forward_zones["A.example.com"].networks: must list at least one network, got an empty array`},
		{"null", zone + `, "use_login": null`, `config: use_login: must be a boolean, got null`},
		{"object for a string", zone + `, "binder_domain": {"a": 1}`, `config: binder_domain: must be a string, got an object`},
		{"fraction for an integer", zone + `, "ttl": {"ns": 1.5}`, `config: ttl.ns: must be an integer, got 1.5`},
		{"integer written as float", zone + `, "ttl": {"ns": 60.0, "record": 1e1}`, ""},
		{"negative", zone + `, "ttl": {"soa_retry": -1}`, `config: ttl.soa_retry: must be at least 0, got -1`},
		{"too large", zone + `, "ttl": {"soa_retry": 2147483648}`, `config: ttl.soa_retry: must be at most 2147483647, got 2147483648`},
		{"long number", zone + `, "mass_delete_share": 0.123456789012345678901234567890123`,
			`config: mass_delete_share: number out of range, got 0.123456789012345678901234567890123`},
		{"big exponent", zone + `, "mass_delete_share": 1e-1000`, `config: mass_delete_share: number out of range, got 1e-1000`},
		{"duplicate top-level key", zone + `, "use_alias": true, "use_alias": false`, `config: duplicate key "use_alias"`},
		{"secret not shown", zone + `, "ufds_opts": {"bindPassword": 7}`, `config: ufds_opts.bindPassword: must be a string (value not shown)`},
		{"api_server port", zone + `, "api_server": {"listen": ["10.0.0.1"], "port": 70000}`, `config: api_server.port: must be at most 65535, got 70000`},
		{"api_server address", zone + `, "api_server": {"listen": ["host.example.com"]}`, `config: api_server.listen[0]: must be an IP address, got "host.example.com"`},
		{"unknown key in tsig key", zone + `, "tsig_keys": {"k": {"secret": "AAEC", "algo": "x"}}`, `config: tsig_keys["k"]: unknown key "algo"`},
		{"missing secret", zone + `, "tsig_keys": {"k": {}}`, `config: tsig_keys["k"].secret: required key is missing`},
		{"redis_opts takes any key", zone + `, "redis_opts": {"anything": {"goes": [1, "x", null]}}`, ""},
		{"reverse tsig key", zone + `, "reverse_zones": {"tsig_key": "k"}`, `config: reverse_zones.tsig_key: no key "k" in tsig_keys`},
		{"duplicate catch-all in one zone", `"forward_zones": {"a.example.com": {"networks": ["*", "*"]}}`,
			`config: forward_zones["a.example.com"].networks[1]: duplicate network "*"`},
		{"nested zones are allowed", `"forward_zones": {"example.com": {"networks": ["*"]}, "a.example.com": {"networks": ["3484af3e-23db-4c63-8940-bf3e006347f3"]}}`, ""},
		{"rfd1 zone keys in reverse_zones", zone + `, "reverse_zones": {"slaves": ["ns0.example.com"], "peers": []}`,
			`config: reverse_zones: both "slaves" and "peers" are set; use only "peers"`},
		{"coalesce equal bounds", zone + `, "coalesce": {"window_ms": 0, "max_delay_ms": 1}`, ""},
		{"zero window", zone + `, "coalesce": {"max_delay_ms": 0}`, `config: coalesce.max_delay_ms: must be at least 1, got 0`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Parse([]byte("{" + head + tc.body + "}"))
			got := ""
			if err != nil {
				got = err.Error()
			}
			if got != tc.want {
				t.Errorf("error\n got: %s\nwant: %s", got, tc.want)
			}
		})
	}
}

func TestErrorType(t *testing.T) {
	tests := []struct {
		err  *Error
		want string
	}{
		{&Error{Message: "file is empty"}, "config: file is empty"},
		{&Error{Path: "my_name", Message: "m"}, "config: my_name: m"},
		{&Error{File: "/etc/cnsd.json", Path: "ttl.ns", Message: "m"}, "config: /etc/cnsd.json: ttl.ns: m"},
	}
	for _, tc := range tests {
		t.Run(tc.want, func(t *testing.T) {
			if got := tc.err.Error(); got != tc.want {
				t.Errorf("got %q", got)
			}
			if !errors.Is(tc.err, ErrInvalid) {
				t.Errorf("does not wrap ErrInvalid")
			}
		})
	}
}

func TestPathStyle(t *testing.T) {
	l := loc{}.key("forward_zones").key("dc1.cns.example.com").key("networks").at(0)
	if got, want := string(pathOf(l)), `forward_zones["dc1.cns.example.com"].networks[0]`; got != want {
		t.Errorf("pathOf = %s, want %s", got, want)
	}
	l = loc{}.key("tsig_keys").key("xfr-key").key("secret")
	if got, want := string(pathOf(l)), `tsig_keys["xfr-key"].secret`; got != want {
		t.Errorf("pathOf = %s, want %s", got, want)
	}
	if got := string(pathOf(loc{}.key("allow_transfer").at(2))); got != "allow_transfer[2]" {
		t.Errorf("pathOf = %s", got)
	}
	if got := describe(strings.Repeat("x", 3)); got != `"xxx"` {
		t.Errorf("describe = %s", got)
	}
}

// TestEveryErrorReported: a file with three distinct faults is rejected
// with all three, each an *Error naming its field and the file, in file
// order.
func TestEveryErrorReported(t *testing.T) {
	data := []byte(`{"my_name": "ns1.example.com", "hostmaster": "hostmaster@example.com",
  "forward_zones": {"a.example.com": {"networks": ["*"]}},
  "ttl": {"record": 0}, "log": {"level": "verbose"}, "use_alias": "yes"}`)
	_, err := ParseFile("cnsd.json", data)
	if !errors.Is(err, ErrInvalid) {
		t.Fatalf("ParseFile = %v, want an error wrapping ErrInvalid", err)
	}
	es, ok := errors.AsType[Errors](err)
	if !ok {
		t.Fatalf("ParseFile = %T %v, want Errors", err, err)
	}
	want := []string{
		`config: cnsd.json: ttl.record: must be at least 1, got 0`,
		`config: cnsd.json: log.level: must be one of "debug", "info", "warn", "error", got "verbose"`,
		`config: cnsd.json: use_alias: must be a boolean, got "yes"`,
	}
	if len(es) != len(want) {
		t.Fatalf("%d errors, want %d: %v", len(es), len(want), err)
	}
	for i, e := range es {
		if e.Error() != want[i] {
			t.Errorf("error %d\n got: %s\nwant: %s", i, e.Error(), want[i])
		}
	}
	wantMsg := `config: cnsd.json: 3 problems: ttl.record: must be at least 1, got 0; ` +
		`log.level: must be one of "debug", "info", "warn", "error", got "verbose"; use_alias: must be a boolean, got "yes"`
	if err.Error() != wantMsg {
		t.Errorf("message\n got: %s\nwant: %s", err.Error(), wantMsg)
	}
	if first, ok := errors.AsType[*Error](err); !ok || first.Path != "ttl.record" {
		t.Errorf("errors.As(*Error) = %v, want the first, ttl.record", first)
	}
}

// TestEveryProblemReported: unknown keys and refused values are reported
// together, and so are the rules that relate several fields.
func TestEveryProblemReported(t *testing.T) {
	tests := []struct {
		name string
		data string
		want []string // paths of the problems, in order
	}{
		{"unknown keys and a bad value", `{"my_name": "ns1.example.com", "hostmaster": "hostmaster@example.com",
  "forward_zones": {"a.example.com": {"netwroks": ["*"]}}, "ttl": {"record": 0}, "use_aliass": true}`,
			[]string{`forward_zones["a.example.com"]`, ``, `ttl.record`}},
		{"rules across fields", `{"my_name": "ns1.example.com", "hostmaster": "hostmaster@example.com",
  "forward_zones": {"a.example.com": {"networks": ["*"], "hidden_primary": true},
                    "b.example.com": {"networks": ["*"]}},
  "coalesce": {"window_ms": 500, "max_delay_ms": 100}}`,
			[]string{`forward_zones["a.example.com"].hidden_primary`, `forward_zones["b.example.com"].networks[0]`, `coalesce.window_ms`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := ParseFile("cnsd.json", []byte(tt.data))
			es, ok := errors.AsType[Errors](err)
			if !ok {
				t.Fatalf("ParseFile = %T %v, want Errors", err, err)
			}
			var got []string
			for _, e := range es {
				got = append(got, e.Path)
			}
			if !slices.Equal(got, tt.want) {
				t.Errorf("problems at %q, want %q\n%v", got, tt.want, err)
			}
		})
	}
}
