package xfr

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"encoding/hex"
	"strconv"
	"testing"
	"time"

	"github.com/miekg/dns"
)

// TestTSIGErrors: a signed query that does not verify is answered
// NOTAUTH with a TSIG record saying why (RFC 8945 §5.2): BADKEY and
// BADSIG unsigned (empty MAC) with cnsd's time, BADTIME signed with the
// key over the request's time and cnsd's time in Other Data. A query
// that verifies gets a signed answer. None of the failures gets data.
func TestTSIGErrors(t *testing.T) {
	const secret = "c2VjcmV0IGtleSBmb3IgdHJhbnNmZXJz"
	keys := `, "tsig_keys": {"xfr": {"algorithm": "hmac-sha256", "secret": "` + secret + `"}}`
	addr, _ := serve(t, testConfig(t, noRRL+keys), testStore(t, queryZones), Options{})
	cases := []struct {
		name    string
		key     string
		alg     string
		secret  string
		skew    time.Duration // of the request's time signed
		rcode   int
		tsigErr uint16
	}{
		{name: "valid", key: "xfr.", alg: dns.HmacSHA256, secret: secret, rcode: dns.RcodeSuccess},
		{name: "unknown key", key: "nokey.", alg: dns.HmacSHA256, secret: secret, rcode: dns.RcodeNotAuth, tsigErr: dns.RcodeBadKey},
		{name: "wrong algorithm", key: "xfr.", alg: dns.HmacSHA512, secret: secret, rcode: dns.RcodeNotAuth, tsigErr: dns.RcodeBadKey},
		{name: "wrong secret", key: "xfr.", alg: dns.HmacSHA256, secret: "b3RoZXIgc2VjcmV0", rcode: dns.RcodeNotAuth, tsigErr: dns.RcodeBadSig},
		{name: "an hour early", key: "xfr.", alg: dns.HmacSHA256, secret: secret, skew: -time.Hour, rcode: dns.RcodeNotAuth, tsigErr: dns.RcodeBadTime},
		{name: "an hour late", key: "xfr.", alg: dns.HmacSHA256, secret: secret, skew: time.Hour, rcode: dns.RcodeNotAuth, tsigErr: dns.RcodeBadTime},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := new(dns.Msg).SetQuestion("web.example.test.", dns.TypeA)
			r.SetEdns0(1232, false)
			signed := time.Now().Add(tc.skew).Unix()
			r.SetTsig(tc.key, tc.alg, 300, signed)
			b, reqMAC, err := dns.TsigGenerate(r, tc.secret, "", false)
			if err != nil {
				t.Fatal(err)
			}
			m, wire := rawExchange(t, "udp", addr, b)
			ts := m.IsTsig()
			if m.Rcode != tc.rcode || ts == nil {
				t.Fatalf("rcode %s, TSIG %v; want %s with a TSIG record", dns.RcodeToString[m.Rcode], ts, dns.RcodeToString[tc.rcode])
			}
			if ts.Hdr.Name != tc.key || ts.Algorithm != tc.alg || ts.Error != tc.tsigErr || ts.OrigId != r.Id {
				t.Fatalf("TSIG %v; want key %s, algorithm %s, error %s, original id %d", ts, tc.key, tc.alg,
					dns.RcodeToString[int(tc.tsigErr)], r.Id)
			}
			if tc.rcode != dns.RcodeSuccess && len(m.Answer)+len(m.Ns) != 0 {
				t.Fatalf("data in a NOTAUTH answer: %v", m)
			}
			now := uint64(time.Now().Unix())
			switch tc.tsigErr {
			case dns.RcodeSuccess:
				if err := dns.TsigVerify(wire, secret, reqMAC, false); err != nil || len(m.Answer) != 2 {
					t.Fatalf("answer with %d records does not verify: %v", len(m.Answer), err)
				}
			case dns.RcodeBadKey, dns.RcodeBadSig:
				if ts.MACSize != 0 || ts.MAC != "" || ts.OtherLen != 0 || ts.TimeSigned+5 < now || ts.TimeSigned > now {
					t.Fatalf("TSIG %v; want an empty MAC, no other data, the server's time (%d)", ts, now)
				}
			case dns.RcodeBadTime:
				if want := badTimeMAC(t, wire, ts, secret, reqMAC); ts.MAC != want {
					t.Fatalf("BADTIME MAC %s, want %s: signed with the key over the request's MAC", ts.MAC, want)
				}
				server, _ := strconv.ParseUint(ts.OtherData, 16, 64)
				if ts.TimeSigned != uint64(signed) || ts.OtherLen != 6 || server+5 < now || server > now {
					t.Fatalf("TSIG %v; want time signed %d, the server's time %d (%s) in other data", ts, signed, now,
						hex.EncodeToString([]byte{byte(now >> 40), byte(now >> 32), byte(now >> 24), byte(now >> 16), byte(now >> 8), byte(now)}))
				}
			}
		})
	}
}

// badTimeMAC computes the HMAC-SHA256 an answer with TSIG record ts
// should carry (RFC 8945 §4.3.3): over the request's MAC, the answer
// without its TSIG record and the TSIG variables. miekg/dns will not
// verify a NOTAUTH answer, so the test does it by hand.
func badTimeMAC(t *testing.T, wire []byte, ts *dns.TSIG, secret, reqMAC string) string {
	t.Helper()
	key, _ := base64.StdEncoding.DecodeString(secret)
	h := hmac.New(sha256.New, key)
	prev, _ := hex.DecodeString(reqMAC)
	h.Write(binary.BigEndian.AppendUint16(nil, uint16(len(prev))))
	h.Write(prev)
	msg := append([]byte(nil), wire[:len(wire)-dns.Len(ts)]...) // the TSIG record's name is never compressed
	binary.BigEndian.PutUint16(msg, ts.OrigId)
	binary.BigEndian.PutUint16(msg[10:], binary.BigEndian.Uint16(msg[10:])-1)
	h.Write(msg)
	vars := make([]byte, 512)
	off, err := dns.PackDomainName(dns.CanonicalName(ts.Hdr.Name), vars, 0, nil, false)
	if err != nil {
		t.Fatal(err)
	}
	vars = append(vars[:off], 0, dns.ClassANY, 0, 0, 0, 0) // class, TTL
	name := make([]byte, 256)
	if off, err = dns.PackDomainName(dns.CanonicalName(ts.Algorithm), name, 0, nil, false); err != nil {
		t.Fatal(err)
	}
	vars = append(vars, name[:off]...)
	vars = binary.BigEndian.AppendUint16(vars, uint16(ts.TimeSigned>>32))
	vars = binary.BigEndian.AppendUint32(vars, uint32(ts.TimeSigned))
	vars = binary.BigEndian.AppendUint16(vars, ts.Fudge)
	vars = binary.BigEndian.AppendUint16(vars, ts.Error)
	vars = binary.BigEndian.AppendUint16(vars, ts.OtherLen)
	other, _ := hex.DecodeString(ts.OtherData)
	h.Write(append(vars, other...))
	return hex.EncodeToString(h.Sum(nil))
}
