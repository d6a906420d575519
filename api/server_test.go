package api

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/miekg/dns"

	"github.com/cnsd/cnsd/schema"
	"github.com/cnsd/cnsd/store"
	"github.com/cnsd/cnsd/xfr"
)

// secondary answers NOTIFY and SOA queries on loopback like a secondary
// that is always current, and version.bind with "test 1".
func secondary(t *testing.T) string {
	t.Helper()
	pc, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var serial uint32
	h := dns.HandlerFunc(func(w dns.ResponseWriter, r *dns.Msg) {
		m := new(dns.Msg)
		m.SetReply(r)
		q := r.Question[0]
		switch {
		case r.Opcode == dns.OpcodeNotify:
			serial = r.Answer[0].(*dns.SOA).Serial
		case q.Qclass == dns.ClassCHAOS:
			m.Answer = []dns.RR{&dns.TXT{Hdr: dns.RR_Header{Name: q.Name, Rrtype: dns.TypeTXT, Class: dns.ClassCHAOS}, Txt: []string{"test 1"}}}
		default:
			m.Answer = []dns.RR{&dns.SOA{Hdr: dns.RR_Header{Name: q.Name, Rrtype: dns.TypeSOA, Class: dns.ClassINET},
				Ns: "ns.", Mbox: "h.", Serial: serial}}
		}
		w.WriteMsg(m)
	})
	srv := &dns.Server{PacketConn: pc, Handler: h}
	go srv.ActivateAndServe()
	t.Cleanup(func() { srv.Shutdown() })
	return pc.LocalAddr().String()
}

// committedAt is the clock of cnsd's store: when its zone was committed.
var committedAt = time.Date(2026, 11, 22, 1, 0, 0, 0, time.UTC)

// cnsd runs a DNS server over a store holding one zone, with one
// secondary, and the API over both; it returns the API's URL.
func cnsd(t *testing.T, access Access) (url string, serial uint32, peer string) {
	t.Helper()
	ctx := context.Background()
	st, err := store.Open(ctx, store.NewMemory(), store.Options{Clock: func() time.Time { return committedAt }}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := st.CommitSource(ctx, "test", map[string][]store.Record{
		"example.test.": {store.NewRecord("a.example.test.", dns.TypeA, "192.0.2.1", "test")}}); err != nil {
		t.Fatal(err)
	}
	peer = secondary(t)
	cfg, err := schema.Parse([]byte(`{"my_name": "ns.example.test", "hostmaster": "hostmaster@example.test",
	  "forward_zones": {"example.test": {"networks": ["*"], "peers": ["` + peer + `"]}},
	  "allow_transfer": ["10.0.0.0/8", "192.0.2.7"]}`))
	if err != nil {
		t.Fatal(err)
	}
	pc, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	dnsSrv := xfr.New(cfg, st, xfr.Options{PacketConns: []net.PacketConn{pc}, PollInterval: 10 * time.Millisecond}, nil)
	runCtx, cancel := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- dnsSrv.Run(runCtx) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil && !errors.Is(err, context.Canceled) {
			t.Errorf("xfr: %v", err)
		}
	})
	serial = uint32(st.Snapshot("example.test.").Serial())
	deadline := time.Now().Add(15 * time.Second)
	for !confirmed(dnsSrv, serial) {
		if time.Now().After(deadline) {
			t.Fatal("the secondary never confirmed the serial")
		}
		time.Sleep(10 * time.Millisecond)
	}
	api := httptest.NewServer(New(st, dnsSrv, access, nil))
	t.Cleanup(api.Close)
	return api.URL, serial, peer
}

func confirmed(s *xfr.Server, serial uint32) bool {
	for _, p := range s.Peers() {
		for _, z := range p.Zones {
			if z.Serial == serial && p.Version != "" {
				return true
			}
		}
	}
	return false
}

func TestRoutes(t *testing.T) {
	url, serial, peer := cnsd(t, Access{Mode: schema.AuthNone})
	host, port, _ := net.SplitHostPort(peer)
	cases := []struct {
		name, method, path string
		status             int
		check              func(t *testing.T, body []byte)
	}{
		{name: "ping", method: "GET", path: "/ping", status: 200},
		{name: "zones", method: "GET", path: "/zones", status: 200, check: func(t *testing.T, b []byte) {
			want := []Zone{{Name: "example.test", Serial: serial, Records: 1, LargestRRset: 1, CommittedAt: "2026-11-22T01:00:00Z"}}
			var got []Zone
			decode(t, b, &got)
			if !reflect.DeepEqual(got, want) {
				t.Fatalf("got %+v, want %+v", got, want)
			}
		}},
		{name: "peers", method: "GET", path: "/peers", status: 200, check: func(t *testing.T, b []byte) {
			var got []Peer
			decode(t, b, &got)
			if len(got) != 1 || got[0].Address != host || got[0].Endpoint != peer || got[0].Serials["example.test"] != serial ||
				got[0].Version != "test 1" || got[0].NotifyFailures != nil {
				t.Fatalf("got %s", b)
			}
		}},
		{name: "peer by address", method: "GET", path: "/peer/" + host, status: 200, check: func(t *testing.T, b []byte) {
			var got Peer
			decode(t, b, &got)
			if got.Address != host || got.NotifyFailures == nil || *got.NotifyFailures != 0 || !*got.UsingNotify ||
				len(got.Zones) != 1 || got.Zones[0].Want != serial || got.Zones[0].ConfirmedAt == "" {
				t.Fatalf("got %s", b)
			}
		}},
		{name: "peer by address and port", method: "GET", path: "/peer/" + net.JoinHostPort(host, port), status: 200},
		{name: "unknown peer", method: "GET", path: "/peer/192.0.2.99", status: 404, check: errorCode("ResourceNotFound")},
		{name: "bad address", method: "GET", path: "/peer/not-an-address", status: 400, check: errorCode("BadRequest")},
		{name: "allowed peers", method: "GET", path: "/allowed-peers", status: 200, check: func(t *testing.T, b []byte) {
			want := []AllowedPeer{{Address: "10.0.0.0", Mask: 8}, {Address: host, Mask: 32}, {Address: "192.0.2.7", Mask: 32}}
			var got []AllowedPeer
			decode(t, b, &got)
			if !reflect.DeepEqual(got, want) {
				t.Fatalf("got %+v, want %+v", got, want)
			}
		}},
		{name: "metrics", method: "GET", path: "/metrics", status: 200, check: func(t *testing.T, b []byte) {
			for _, line := range []string{
				`cnsd_zone_serial{zone="example.test"} ` + strconv.FormatFloat(float64(serial), 'g', -1, 64),
				`cnsd_zone_records{zone="example.test"} 1`,
				`cnsd_zone_largest_rrset{zone="example.test"} 1`,
				`cnsd_zone_journal_entries{zone="example.test"} 1`,
				fmt.Sprintf(`cnsd_peer_confirmed_serial{peer=%q,zone="example.test"} %s`, peer, strconv.FormatFloat(float64(serial), 'g', -1, 64)),
				fmt.Sprintf(`cnsd_peer_behind_seconds{peer=%q,zone="example.test"} 0`, peer),
				fmt.Sprintf(`cnsd_peer_notify_failed_total{peer=%q,zone="example.test"} 0`, peer),
				`cnsd_dns_transfers_total{kind="axfr"} 0`,
			} {
				if !strings.Contains(string(b), line+"\n") {
					t.Errorf("no line %q in:\n%s", line, grepCNSD(b))
				}
			}
		}},
		{name: "forget unknown peer", method: "DELETE", path: "/peer/192.0.2.99", status: 404},
		{name: "forget peer", method: "DELETE", path: "/peer/" + host, status: 200},
		{name: "unknown route", method: "GET", path: "/nothing", status: 404, check: errorCode("ResourceNotFound")},
		{name: "wrong method", method: "POST", path: "/zones", status: 405, check: errorCode("MethodNotAllowed")},
		{name: "wrong method on a path with a parameter", method: "PUT", path: "/peer/" + host, status: 405, check: errorCode("MethodNotAllowed")},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			status, body := call(t, tc.method, url+tc.path, "")
			if status != tc.status {
				t.Fatalf("status %d, want %d: %s", status, tc.status, body)
			}
			if tc.check != nil {
				tc.check(t, body)
			}
		})
	}
}

// TestAccess checks which routes each api.auth lets in, with which
// token: probes always, reads with either token (or none under
// "writes"), state changes with the admin token only.
func TestAccess(t *testing.T) {
	const admin, reader = "Bearer s3cret", "Bearer r3ad"
	tokens := Access{Token: "s3cret", ReadToken: "r3ad"}
	withMode := func(mode string, metricsOpen bool) Access {
		a := tokens
		a.Mode, a.MetricsOpen = mode, metricsOpen
		return a
	}
	urls := map[string]string{}
	for name, a := range map[string]Access{
		"token": withMode(schema.AuthToken, false), "writes": withMode(schema.AuthWrites, false),
		"none": {Mode: schema.AuthNone}, "metrics open": withMode(schema.AuthToken, true),
		"no token": {Mode: schema.AuthToken},
	} {
		urls[name], _, _ = cnsd(t, a)
	}
	cases := []struct {
		access, method, path, auth string
		status                     int
	}{
		{"token", "GET", "/ping", "", 200},
		{"token", "GET", "/ready", "", 200},
		{"token", "GET", "/zones", "", 401},
		{"token", "GET", "/zones", "Bearer nope", 401},
		{"token", "GET", "/zones", "Basic s3cret", 401},
		{"token", "GET", "/zones", "Bearer ", 401},
		{"token", "GET", "/zones", admin, 200},
		{"token", "GET", "/zones", reader, 200},
		{"token", "GET", "/metrics", "", 401},
		{"token", "GET", "/metrics", reader, 200},
		{"token", "DELETE", "/peer/192.0.2.99", "", 401},
		{"token", "DELETE", "/peer/192.0.2.99", reader, 403},
		{"token", "DELETE", "/peer/192.0.2.99", admin, 404},
		{"token", "POST", "/held-deletions/re-list/confirm", reader, 403},
		{"writes", "GET", "/zones", "", 200},
		{"writes", "GET", "/peer/192.0.2.99", "", 404},
		{"writes", "GET", "/metrics", "", 401},
		{"writes", "DELETE", "/peer/192.0.2.99", "", 401},
		{"writes", "DELETE", "/peer/192.0.2.99", reader, 403},
		{"writes", "DELETE", "/peer/192.0.2.99", admin, 404},
		{"none", "GET", "/zones", "", 200},
		{"none", "GET", "/metrics", "", 200},
		{"none", "DELETE", "/peer/192.0.2.99", "", 404},
		{"metrics open", "GET", "/metrics", "", 200},
		{"metrics open", "GET", "/zones", "", 401},
		{"no token", "GET", "/zones", "Bearer ", 401},
		{"no token", "GET", "/zones", "", 401},
	}
	for _, tc := range cases {
		t.Run(tc.access+" "+tc.method+" "+tc.path+" "+tc.auth, func(t *testing.T) {
			status, body := call(t, tc.method, urls[tc.access]+tc.path, tc.auth)
			if status != tc.status {
				t.Fatalf("status %d, want %d: %s", status, tc.status, body)
			}
			if code := map[int]string{401: "Unauthorized", 403: "Forbidden"}[status]; code != "" {
				errorCode(code)(t, body)
			}
		})
	}
}

func call(t *testing.T, method, url, auth string) (int, []byte) {
	t.Helper()
	req, err := http.NewRequest(method, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	if auth != "" {
		req.Header.Set("Authorization", auth)
	}
	return do(t, req)
}

// do sends req and returns the status and body of the answer.
func do(t *testing.T, req *http.Request) (int, []byte) {
	t.Helper()
	resp, body := exchangeOnce(t, req)
	return resp.StatusCode, body
}

func decode(t *testing.T, b []byte, v any) {
	t.Helper()
	if err := json.Unmarshal(b, v); err != nil {
		t.Fatalf("%v: %s", err, b)
	}
}

func errorCode(code string) func(t *testing.T, b []byte) {
	return func(t *testing.T, b []byte) {
		var e Error
		decode(t, b, &e)
		if e.Code != code || e.Message == "" {
			t.Fatalf("error %s, want code %s and a message", b, code)
		}
	}
}

func grepCNSD(b []byte) string {
	var out []string
	for _, l := range strings.Split(string(b), "\n") {
		if strings.HasPrefix(l, "cnsd_") {
			out = append(out, l)
		}
	}
	return strings.Join(out, "\n")
}
