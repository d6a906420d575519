package xfr

import (
	"testing"

	"github.com/miekg/dns"

	"github.com/cnsd/cnsd/schema"
)

func TestTransferACL(t *testing.T) {
	const secret = "c2VjcmV0IGtleSBmb3IgdHJhbnNmZXJz"
	keys := `, "tsig_keys": {"xfr": {"algorithm": "hmac-sha256", "secret": "` + secret + `"},
	              "other": {"algorithm": "hmac-sha512", "secret": "b3RoZXIgc2VjcmV0"}}`
	zones := map[string][]string{"example.test.": {"a A 192.0.2.1"}, "signed.test.": {"a A 192.0.2.1"}}
	good := &tsigKey{name: "xfr.", alg: dns.HmacSHA256, secret: secret}
	other := &tsigKey{name: "other.", alg: dns.HmacSHA512, secret: "b3RoZXIgc2VjcmV0"}
	cases := []struct {
		name   string
		access string // example.test's further settings
		global string // further top-level settings
		zone   string
		ixfr   bool
		key    *tsigKey
		want   int
	}{
		{name: "loopback, nothing allowed", zone: "example.test.", want: dns.RcodeRefused},
		{name: "loopback IXFR, nothing allowed", zone: "example.test.", ixfr: true, want: dns.RcodeRefused},
		{name: "loopback, another zone's secondary", global: `, "reverse_zones": {"peers": ["127.0.0.1"]}`, zone: "example.test.", want: dns.RcodeRefused},
		{name: "zone allow_transfer", access: `, "allow_transfer": ["127.0.0.0/8"]`, zone: "example.test.", want: dns.RcodeSuccess},
		{name: "zone allow_transfer, IXFR", access: `, "allow_transfer": ["127.0.0.0/8"]`, zone: "example.test.", ixfr: true, want: dns.RcodeSuccess},
		{name: "global allow_transfer", global: `, "allow_transfer": ["127.0.0.1"]`, zone: "example.test.", want: dns.RcodeSuccess},
		{name: "other prefix", access: `, "allow_transfer": ["192.0.2.0/24"]`, zone: "example.test.", want: dns.RcodeRefused},
		{name: "secondary by address", access: `, "peers": ["127.0.0.1"]`, zone: "example.test.", want: dns.RcodeSuccess},
		{name: "zone key", access: `, "tsig_key": "xfr"`, zone: "example.test.", key: good, want: dns.RcodeSuccess},
		{name: "zone key, IXFR", access: `, "tsig_key": "xfr"`, zone: "example.test.", ixfr: true, key: good, want: dns.RcodeSuccess},
		{name: "another key", access: `, "tsig_key": "xfr"`, zone: "example.test.", key: other, want: dns.RcodeRefused},
		{name: "TSIG required, unsigned", global: `, "allow_transfer": ["127.0.0.1"]`, zone: "signed.test.", want: dns.RcodeRefused},
		{name: "TSIG required, signed", zone: "signed.test.", key: good, want: dns.RcodeSuccess},
		{name: "TSIG required, other key", zone: "signed.test.", key: other, want: dns.RcodeRefused},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			cfg, err := schema.Parse([]byte(`{"my_name": "ns.example.test", "hostmaster": "hostmaster@example.test",
			  "forward_zones": {"example.test": {"networks": ["*"]` + tc.access + `},
			    "signed.test": {"networks": ["a1b2c3d4-0000-4000-8000-000000000001"], "tsig_key": "xfr", "require_tsig": true}}` +
				keys + tc.global + `}`))
			if err != nil {
				t.Fatal(err)
			}
			addr, _ := serve(t, cfg, testStore(t, zones), Options{})
			// An IXFR from serial 1, which the journal does not cover,
			// gets the whole zone like an AXFR.
			got, rcode, _ := transfer(t, addr, tc.zone, tc.ixfr, 1, tc.key)
			if rcode != tc.want {
				t.Fatalf("rcode %s, want %s", dns.RcodeToString[rcode], dns.RcodeToString[tc.want])
			}
			if tc.want == dns.RcodeSuccess && len(got) != 4 {
				t.Fatalf("%d records, want SOA, NS, A, SOA", len(got))
			}
			if tc.want != dns.RcodeSuccess && len(got) != 0 {
				t.Fatalf("refused, yet %d records arrived", len(got))
			}
		})
	}
}
