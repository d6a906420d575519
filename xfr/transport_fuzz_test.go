package xfr

import (
	"testing"

	"github.com/miekg/dns"
)

// FuzzRequest feeds request what a socket may deliver: it never panics,
// drops exactly what is shorter than a header or a response, and what it
// hands on parses to the message it returns.
func FuzzRequest(f *testing.F) {
	for _, m := range []*dns.Msg{
		new(dns.Msg).SetQuestion("web.example.test.", dns.TypeA),
		new(dns.Msg).SetQuestion("example.test.", dns.TypeSOA).SetEdns0(1232, true),
		new(dns.Msg).SetAxfr("example.test."),
	} {
		b, err := m.Pack()
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
		f.Add(b[:len(b)-1])
		f.Add(append(b, 0))
	}
	f.Fuzz(func(t *testing.T, packet []byte) {
		r, raw := request(append([]byte(nil), packet...))
		dropped := len(packet) < headerLen || packet[2]&0x80 != 0
		if (r == nil) != dropped {
			t.Fatalf("request(%x) = %v; want dropped %v", packet, r, dropped)
		}
		if r == nil {
			return
		}
		again := new(dns.Msg)
		if err := again.Unpack(raw); err != nil || again.Id != r.Id || len(again.Question) != len(r.Question) {
			t.Fatalf("raw %x does not parse to the request: %v", raw, err)
		}
	})
}
