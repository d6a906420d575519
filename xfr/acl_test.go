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
		deny   bool
		zone   string
		key    *tsigKey
		want   int
	}{
		{name: "loopback", zone: "example.test.", want: dns.RcodeSuccess},
		{name: "loopback denied", deny: true, zone: "example.test.", want: dns.RcodeRefused},
		{name: "zone allow_transfer", access: `, "allow_transfer": ["127.0.0.0/8"]`, deny: true, zone: "example.test.", want: dns.RcodeSuccess},
		{name: "global allow_transfer", global: `, "allow_transfer": ["127.0.0.1"]`, deny: true, zone: "example.test.", want: dns.RcodeSuccess},
		{name: "other prefix", access: `, "allow_transfer": ["192.0.2.0/24"]`, deny: true, zone: "example.test.", want: dns.RcodeRefused},
		{name: "secondary by address", access: `, "peers": ["127.0.0.1"]`, deny: true, zone: "example.test.", want: dns.RcodeSuccess},
		{name: "zone key", access: `, "tsig_key": "xfr"`, deny: true, zone: "example.test.", key: good, want: dns.RcodeSuccess},
		{name: "TSIG required, unsigned", zone: "signed.test.", want: dns.RcodeRefused},
		{name: "TSIG required, signed", deny: true, zone: "signed.test.", key: good, want: dns.RcodeSuccess},
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
			addr, _ := serve(t, cfg, testStore(t, zones), Options{DenyLoopbackTransfer: tc.deny})
			got, rcode, _ := transfer(t, addr, tc.zone, false, 0, tc.key)
			if rcode != tc.want {
				t.Fatalf("rcode %s, want %s", dns.RcodeToString[rcode], dns.RcodeToString[tc.want])
			}
			if tc.want == dns.RcodeSuccess && len(got) != 4 {
				t.Fatalf("%d records, want SOA, NS, A, SOA", len(got))
			}
		})
	}
}
