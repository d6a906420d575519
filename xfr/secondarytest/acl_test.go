package secondarytest_test

import (
	"testing"
	"time"

	"github.com/miekg/dns"

	"github.com/cnsd/cnsd/store"
	"github.com/cnsd/cnsd/xfr"
	"github.com/cnsd/cnsd/xfr/secondarytest"
)

var testKey = &secondarytest.Key{Name: "xfr-key", Algorithm: "hmac-sha256",
	Secret: "Y25zZC1zZWNvbmRhcnktdGVzdC1rZXktMzItYnl0ZXMh"}

// aclConfig has three zones: open (the unsigned secondary is its peer),
// closed (nobody may transfer it) and signed (127.0.0.1 may, with the
// key only).
const aclConfig = `{"my_name": "ns1.cnsd.test", "hostmaster": "hostmaster@cnsd.test",
	"forward_zones": {
		"open.cnsd.test": {"networks": ["*"], "peers": [%q]},
		"closed.cnsd.test": {"networks": ["0f3c1a8e-5f0e-4a57-9a57-5a1b2e7c9d01"]},
		"signed.cnsd.test": {"networks": ["0f3c1a8e-5f0e-4a57-9a57-5a1b2e7c9d02"],
			"allow_transfer": ["127.0.0.1"], "tsig_key": %q, "require_tsig": true}
	},
	"tsig_keys": {%q: {"algorithm": %q, "secret": %q}}}`

func aclStore(t *testing.T) *store.Store {
	st := openStore(t, store.Options{})
	commit(t, st, map[string][]store.Record{
		"open.cnsd.test.":   {rec("a.open.cnsd.test.", dns.TypeA, "192.0.2.1")},
		"closed.cnsd.test.": {rec("a.closed.cnsd.test.", dns.TypeA, "192.0.2.2")},
		"signed.cnsd.test.": {rec("a.signed.cnsd.test.", dns.TypeA, "192.0.2.3")},
	})
	return st
}

// TestTransferACL: loopback is not allowed by default, so a secondary
// transfers the zone it is a peer of but is refused the zone nobody may
// transfer and the zone that requires TSIG; a secondary configured with
// the key transfers that one.
func TestTransferACL(t *testing.T) {
	for _, sec := range secondaries {
		t.Run(sec.name, func(t *testing.T) {
			st := aclStore(t)
			c := listenCNSD(t)
			plain := sec.start(t, secondarytest.Config{Primary: c.addr,
				Zones: []string{"open.cnsd.test", "closed.cnsd.test", "signed.cnsd.test"}})
			signed := sec.start(t, secondarytest.Config{Primary: c.addr, Zones: []string{"signed.cnsd.test"}, TSIG: testKey})
			cfg := parseConfig(t, aclConfig, peer(plain), testKey.Name, testKey.Name, testKey.Algorithm, testKey.Secret)
			c.run(t, cfg, st, xfr.Options{})

			plain.WaitSerial(t, "open.cnsd.test", uint32(st.Snapshot("open.cnsd.test.").Serial()), waitTimeout)
			sameAnswers(t, c, plain, []string{"a.open.cnsd.test", "b.open.cnsd.test"}, "A")
			signed.WaitSerial(t, "signed.cnsd.test", uint32(st.Snapshot("signed.cnsd.test.").Serial()), waitTimeout)
			sameAnswers(t, c, signed, []string{"a.signed.cnsd.test", "b.signed.cnsd.test"}, "A")
			for _, zone := range []string{"closed.cnsd.test", "signed.cnsd.test"} {
				line := plain.WaitRefused(t, waitTimeout, zone)
				t.Logf("%s: %s", sec.name, line)
				if serial, ok := plain.Serial(zone); ok {
					t.Errorf("%s serves %s at serial %d without being allowed to transfer it", sec.name, zone, serial)
				}
			}
		})
	}
}

// TestTransferACLClient asks for the zones with a plain client, as dig
// would: REFUSED without the key, the zone with it.
func TestTransferACLClient(t *testing.T) {
	st := aclStore(t)
	c := listenCNSD(t)
	cfg := parseConfig(t, aclConfig, "192.0.2.53", testKey.Name, testKey.Name, testKey.Algorithm, testKey.Secret)
	c.run(t, cfg, st, xfr.Options{})
	tests := []struct {
		zone  string
		qtype uint16
		key   *secondarytest.Key
		rcode int // of the first message
	}{
		{"open.cnsd.test.", dns.TypeAXFR, nil, dns.RcodeRefused}, // its peer is 192.0.2.53
		{"closed.cnsd.test.", dns.TypeAXFR, nil, dns.RcodeRefused},
		{"closed.cnsd.test.", dns.TypeIXFR, nil, dns.RcodeRefused},
		{"closed.cnsd.test.", dns.TypeAXFR, testKey, dns.RcodeRefused},
		{"signed.cnsd.test.", dns.TypeAXFR, nil, dns.RcodeRefused},
		{"signed.cnsd.test.", dns.TypeIXFR, nil, dns.RcodeRefused},
		{"signed.cnsd.test.", dns.TypeAXFR, testKey, dns.RcodeSuccess},
	}
	for _, tt := range tests {
		name := dns.TypeToString[tt.qtype] + " " + tt.zone
		if tt.key != nil {
			name += " signed"
		}
		t.Run(name, func(t *testing.T) {
			first, records := transfer(t, c, tt.zone, tt.qtype, tt.key)
			if first.Rcode != tt.rcode {
				t.Fatalf("rcode %s, want %s", dns.RcodeToString[first.Rcode], dns.RcodeToString[tt.rcode])
			}
			if tt.rcode == dns.RcodeSuccess && records < 3 {
				t.Errorf("%d records, want the zone (SOA, records, SOA)", records)
			}
			if tt.rcode != dns.RcodeSuccess && len(first.Answer) > 0 {
				t.Errorf("a refusal carries records: %v", first.Answer)
			}
		})
	}
}

// transfer asks cnsd for a zone transfer over TCP, signed with key when
// it is set, and returns the first response and the number of records of
// all of them.
func transfer(t *testing.T, c *cnsd, zone string, qtype uint16, key *secondarytest.Key) (*dns.Msg, int) {
	t.Helper()
	m := new(dns.Msg)
	m.SetQuestion(zone, qtype)
	if qtype == dns.TypeIXFR {
		m.Ns = []dns.RR{&dns.SOA{Hdr: dns.RR_Header{Name: zone, Rrtype: dns.TypeSOA, Class: dns.ClassINET},
			Ns: "ns.invalid.", Mbox: "h.invalid.", Serial: 1}}
	}
	conn, err := dns.DialTimeout("tcp", c.addr.String(), 2*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if key != nil {
		name := dns.Fqdn(key.Name)
		m.SetTsig(name, dns.Fqdn(key.Algorithm), 300, time.Now().Unix())
		conn.TsigSecret = map[string]string{name: key.Secret}
	}
	_ = conn.SetDeadline(time.Now().Add(10 * time.Second))
	if err := conn.WriteMsg(m); err != nil {
		t.Fatal(err)
	}
	var first *dns.Msg
	records, soas := 0, 0
	for {
		r, err := conn.ReadMsg()
		if err != nil {
			t.Fatalf("read %s %s: %v", dns.TypeToString[qtype], zone, err)
		}
		if key != nil && r.IsTsig() == nil {
			t.Fatalf("an answer to a signed request is not signed: %v", r)
		}
		if first == nil {
			first = r
		}
		if r.Rcode != dns.RcodeSuccess {
			return first, records
		}
		for _, rr := range r.Answer {
			records++
			if rr.Header().Rrtype == dns.TypeSOA {
				soas++
			}
		}
		if soas >= 2 || (qtype == dns.TypeIXFR && soas == 1 && records == 1) {
			return first, records
		}
	}
}
