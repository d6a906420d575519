package xfr

import (
	"net"
	"testing"

	"github.com/miekg/dns"
)

// FuzzServeDNS feeds arbitrary packets to the handler: whatever arrives,
// it must not panic, and what it writes must be a well-formed answer to
// the packet's ID.
func FuzzServeDNS(f *testing.F) {
	zones := queryZones
	for _, q := range []struct {
		name  string
		qtype uint16
		edns  bool
	}{
		{"web.example.test.", dns.TypeA, false},
		{"alias.example.test.", dns.TypeAAAA, true},
		{"_http._tcp.svc.example.test.", dns.TypeSRV, true},
		{"1.2.0.192.in-addr.arpa.", dns.TypePTR, false},
		{"example.test.", dns.TypeANY, true},
		{"example.test.", dns.TypeAXFR, false},
		{"example.test.", dns.TypeIXFR, false},
		{"loop1.example.test.", dns.TypeTXT, false},
	} {
		m := new(dns.Msg)
		m.SetQuestion(q.name, q.qtype)
		if q.edns {
			m.SetEdns0(4096, true)
		}
		b, err := m.Pack()
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	// NOTIFY, UPDATE and a TSIG-signed request (its MAC empty: the
	// fuzzer varies it) reach other paths than a query.
	notify := new(dns.Msg)
	notify.SetNotify("example.test.")
	update := new(dns.Msg)
	update.SetUpdate("example.test.")
	signed := new(dns.Msg)
	signed.SetAxfr("example.test.")
	signed.SetTsig("xfr-key.", dns.HmacSHA256, 300, 1700000000)
	for _, m := range []*dns.Msg{notify, update, signed} {
		b, err := m.Pack()
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	s := New(testConfig(f, ""), testStore(f, zones), Options{}, nil)
	f.Fuzz(func(t *testing.T, packet []byte) {
		r := new(dns.Msg)
		if err := r.Unpack(packet); err != nil {
			return // the server library drops what does not unpack
		}
		for _, remote := range []net.Addr{
			&net.UDPAddr{IP: net.IPv4(192, 0, 2, 1), Port: 5300},
			&net.TCPAddr{IP: net.IPv6loopback, Port: 5300},
		} {
			w := &recorder{remote: remote}
			s.ServeDNS(w, r)
			if w.msg == nil {
				continue // a transfer writer that refused to write
			}
			if w.msg.Id != r.Id || !w.msg.Response {
				t.Fatalf("answer id %d response %v to request %d", w.msg.Id, w.msg.Response, r.Id)
			}
			if _, udp := remote.(*net.UDPAddr); udp && w.wire > min(max(dns.MinMsgSize, int(udpSize(r))), defaultUDPPayload) {
				t.Fatalf("UDP answer of %d octets to a client that takes %d", w.wire, udpSize(r))
			}
		}
	})
}

func udpSize(r *dns.Msg) uint16 {
	if opt := r.IsEdns0(); opt != nil {
		return opt.UDPSize()
	}
	return dns.MinMsgSize
}
