package xfr

import (
	"fmt"
	"net"
	"testing"
	"time"

	"github.com/miekg/dns"

	"github.com/cnsd/cnsd/schema"
)

// TestSignedTransfer: a signed AXFR of several messages carries a TSIG
// record in every message, the first signed over the request's MAC with
// all variables, each later one over the previous MAC with the timers
// only (RFC 8945 §5.3.1), as miekg/dns checks them one by one; and the
// records are those of the unsigned transfer.
func TestSignedTransfer(t *testing.T) {
	const secret = "c2VjcmV0IGtleSBmb3IgdHJhbnNmZXJz"
	var lines []string
	for i := range 3000 {
		lines = append(lines, fmt.Sprintf("vm%04d.inst A 10.1.%d.%d", i, i/250, i%250+1),
			fmt.Sprintf(`vm%04d.inst TXT "%032x"`, i, i))
	}
	cfg, err := schema.Parse([]byte(`{"my_name": "ns.example.test", "hostmaster": "hostmaster@example.test",
	  "forward_zones": {"example.test": {"networks": ["*"], "tsig_key": "xfr", "allow_transfer": ["127.0.0.1"]}},
	  "tsig_keys": {"xfr": {"algorithm": "hmac-sha256", "secret": "` + secret + `"}}}`))
	if err != nil {
		t.Fatal(err)
	}
	addr, _ := serve(t, cfg, testStore(t, map[string][]string{"example.test.": lines}), Options{})
	for _, alg := range []string{dns.HmacSHA256, "HMAC-SHA256."} {
		t.Run(alg, func(t *testing.T) {
			m := new(dns.Msg).SetAxfr("example.test.")
			m.SetEdns0(1232, false)
			m.SetTsig("xfr.", alg, 300, time.Now().Unix())
			b, prev, err := dns.TsigGenerate(m, secret, "", false)
			if err != nil {
				t.Fatal(err)
			}
			c, err := net.Dial("tcp", addr)
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			if _, err := c.Write(append([]byte{byte(len(b) >> 8), byte(len(b))}, b...)); err != nil {
				t.Fatal(err)
			}
			var records, msgs int
			for soas := 0; soas < 2; {
				raw, err := readRaw(c)
				if err != nil {
					t.Fatalf("message %d: %v", msgs, err)
				}
				r := new(dns.Msg)
				if err := r.Unpack(raw); err != nil {
					t.Fatalf("message %d: %v", msgs, err)
				}
				ts := r.IsTsig()
				if ts == nil {
					t.Fatalf("message %d is not signed", msgs)
				}
				if err := dns.TsigVerify(raw, secret, prev, msgs > 0); err != nil {
					t.Fatalf("message %d: %v", msgs, err)
				}
				if ts.Algorithm != alg || ts.OrigId != m.Id {
					t.Errorf("message %d: TSIG algorithm %q, original ID %d; want %q, %d", msgs, ts.Algorithm, ts.OrigId, alg, m.Id)
				}
				if (r.IsEdns0() != nil) != (msgs == 0) {
					t.Errorf("message %d: OPT record %v", msgs, r.IsEdns0())
				}
				prev = ts.MAC
				for _, rr := range r.Answer {
					if rr.Header().Rrtype == dns.TypeSOA {
						soas++
					}
				}
				records += len(r.Answer)
				msgs++
			}
			if msgs < 3 || records != 6003 {
				t.Errorf("%d records in %d messages, want 6003 (SOA, NS, 6000, SOA) in several", records, msgs)
			}
		})
	}
}

// readRaw reads one length-prefixed message.
func readRaw(c net.Conn) ([]byte, error) {
	var l [2]byte
	if _, err := readFull(c, l[:]); err != nil {
		return nil, err
	}
	b := make([]byte, int(l[0])<<8|int(l[1]))
	_, err := readFull(c, b)
	return b, err
}

func readFull(c net.Conn, b []byte) (int, error) {
	_ = c.SetReadDeadline(time.Now().Add(10 * time.Second))
	n := 0
	for n < len(b) {
		k, err := c.Read(b[n:])
		n += k
		if err != nil {
			return n, err
		}
	}
	return n, nil
}
