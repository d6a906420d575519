package api

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/cnsd/cnsd/schema"
)

// accessNames are the values of x-cnsd-access for each level.
var accessNames = map[level]string{open: "open", read: "read", metrics: "metrics", write: "write"}

// TestOpenAPIRoutes: openapi.json documents exactly the routes New
// registers, each with the access it has, the security that says so,
// its path parameters, and an Error answer for everything else.
func TestOpenAPIRoutes(t *testing.T) {
	sp := loadSpec(t)
	registered := map[string]string{}
	for _, rt := range New(nil, nil, Access{}, nil).routes {
		registered[rt.method+" "+rt.path] = accessNames[rt.level]
	}
	documented := map[string]string{}
	ids := map[string]bool{}
	for _, o := range sp.operations() {
		key := o.method + " " + o.path
		documented[key] = o.access
		id, _ := o.obj["operationId"].(string)
		if id == "" || ids[id] {
			t.Errorf("%s: operationId %q is missing or not unique", key, id)
		}
		ids[id] = true
		checkSecurity(t, sp, o)
		checkParameters(t, sp, o)
		if _, _, explicit := sp.response(o, 599); explicit {
			t.Errorf("%s: 599 documented", key)
		}
		if ptr, _, _ := sp.response(o, 599); ptr != "/components/responses/Error" {
			t.Errorf("%s: the default answer is %s, want the Error response", key, ptr)
		}
	}
	for _, key := range slices.Sorted(maps.Keys(registered)) {
		if got, ok := documented[key]; !ok {
			t.Errorf("route %s is registered but not in openapi.json", key)
		} else if got != registered[key] {
			t.Errorf("route %s: x-cnsd-access %q in openapi.json, registered as %q", key, got, registered[key])
		}
	}
	for _, key := range slices.Sorted(maps.Keys(documented)) {
		if _, ok := registered[key]; !ok {
			t.Errorf("openapi.json documents %s, which New does not register", key)
		}
	}
}

// checkSecurity: open operations need no token, read ones either token,
// write ones the admin token; every operation that needs one documents
// 401, and every write one 403.
func checkSecurity(t *testing.T, sp *spec, o operation) {
	t.Helper()
	want := map[string]string{"open": "[]", "read": `[{"adminToken":[]},{"readToken":[]}]`,
		"metrics": `[{"adminToken":[]},{"readToken":[]}]`, "write": `[{"adminToken":[]}]`}[o.access]
	if want == "" {
		t.Fatalf("%s %s: x-cnsd-access %q", o.method, o.path, o.access)
	}
	if got := compact(t, o.obj["security"]); got != want {
		t.Errorf("%s %s (%s): security %s, want %s", o.method, o.path, o.access, got, want)
	}
	for status, needed := range map[int]bool{401: o.access != "open", 403: o.access == "write"} {
		if _, _, explicit := sp.response(o, status); explicit != needed {
			t.Errorf("%s %s (%s): %d documented: %v, want %v", o.method, o.path, o.access, status, explicit, needed)
		}
	}
}

// checkParameters: every {parameter} of the path is declared, in the
// path's item or the operation.
func checkParameters(t *testing.T, sp *spec, o operation) {
	t.Helper()
	declared := map[string]bool{}
	item := sp.doc["paths"].(map[string]any)[o.path].(map[string]any)
	for _, list := range []any{item["parameters"], o.obj["parameters"]} {
		ps, _ := list.([]any)
		for _, p := range ps {
			pm := p.(map[string]any)
			if ref, ok := pm["$ref"].(string); ok {
				pm = sp.at(strings.TrimPrefix(ref, "#")).(map[string]any)
			}
			if pm["in"] == "path" {
				declared[pm["name"].(string)] = true
			}
		}
	}
	for _, m := range regexp.MustCompile(`\{([^}]+)\}`).FindAllStringSubmatch(o.path, -1) {
		if !declared[m[1]] {
			t.Errorf("%s %s: path parameter %s is not declared", o.method, o.path, m[1])
		}
		delete(declared, m[1])
	}
	if len(declared) > 0 {
		t.Errorf("%s %s: parameters %v are not in the path", o.method, o.path, slices.Collect(maps.Keys(declared)))
	}
}

// exchange is one request to a running API and the status it must get.
type exchange struct {
	name, method, url, path, auth, body string
	status                              int
}

// TestOpenAPIResponses sends every route real requests on the test
// fixtures (a DNS server with a secondary; a writer with a cloud; a
// follower; a closed API) and checks each answer, errors included,
// against openapi.json. Every status openapi.json lists for an operation
// must be seen.
func TestOpenAPIResponses(t *testing.T) {
	sp := loadSpec(t)
	dnsURL, _, peer := cnsd(t, Access{Mode: schema.AuthNone})
	host, _, _ := net.SplitHostPort(peer)
	writer := cloudAPIWith(t, true, Access{Mode: schema.AuthNone}, fakeHealth{})
	follower := cloudAPI(t, false)
	notReady := cloudAPIWith(t, false, Access{Mode: schema.AuthNone}, fakeHealth{reasons: []string{"redis is unreachable"}})
	closed := cloudAPIWith(t, true, Access{Mode: schema.AuthToken, Token: "s3cret", ReadToken: "r3ad"}, nil)
	const held = "/held-deletions/re-list/confirm"
	cases := []exchange{
		{name: "ping", url: dnsURL, path: "/ping", status: 200},
		{name: "ping in the writer", url: writer, path: "/ping", status: 200},
		{name: "ready", url: writer, path: "/ready", status: 200},
		{name: "not ready", url: notReady, path: "/ready", status: 503},
		{name: "openapi", url: closed, path: "/openapi.json", status: 200},
		{name: "zones", url: dnsURL, path: "/zones", status: 200},
		{name: "zones in the writer", url: writer, path: "/zones", status: 200},
		{name: "peers", url: dnsURL, path: "/peers", status: 200},
		{name: "no peers", url: writer, path: "/peers", status: 200},
		{name: "peer", url: dnsURL, path: "/peer/" + host, status: 200},
		{name: "peer with port", url: dnsURL, path: "/peer/" + peer, status: 200},
		{name: "unknown peer", url: dnsURL, path: "/peer/192.0.2.99", status: 404},
		{name: "bad peer address", url: dnsURL, path: "/peer/not-an-address", status: 400},
		{name: "allowed peers", url: dnsURL, path: "/allowed-peers", status: 200},
		{name: "vm in the writer", url: writer, path: "/vm/" + vmUUID, status: 200},
		{name: "vm in a follower", url: follower, path: "/vm/" + vmUUID, status: 200},
		{name: "vm without names", url: follower, path: "/vm/" + otherVM, status: 200},
		{name: "unknown vm", url: writer, path: "/vm/00000009-0000-4000-8000-000000000009", status: 404},
		{name: "suffixes", method: "POST", url: writer, path: "/suffixes-for-vm", body: `{"owner_uuid": "o1", "networks": ["n1"]}`, status: 200},
		{name: "suffixes without networks", method: "POST", url: writer, path: "/suffixes-for-vm", body: `{"owner_uuid": "o1"}`, status: 400},
		{name: "suffixes not JSON", method: "POST", url: writer, path: "/suffixes-for-vm", body: `owner=o1`, status: 400},
		{name: "suffixes too large", method: "POST", url: writer, path: "/suffixes-for-vm",
			body: `{"owner_uuid": "` + strings.Repeat("o", MaxBodyBytes) + `", "networks": []}`, status: 413},
		{name: "suffixes lookup fails", method: "POST", url: writer, path: "/suffixes-for-vm", body: `{"owner_uuid": "unreachable", "networks": []}`, status: 503},
		{name: "suffixes in a follower", method: "POST", url: follower, path: "/suffixes-for-vm", body: `{"owner_uuid": "o1", "networks": []}`, status: 503},
		{name: "pending removals", url: writer, path: "/pending-removals", status: 200},
		{name: "pending removals in a follower", url: follower, path: "/pending-removals", status: 503},
		{name: "held deletions", url: writer, path: "/held-deletions", status: 200},
		{name: "held deletions in a follower", url: follower, path: "/held-deletions", status: 503},
		{name: "metrics", url: dnsURL, path: "/metrics", status: 200},
		{name: "confirm in a follower", method: "POST", url: follower, path: held, status: 503},
		{name: "confirm unknown cause", method: "POST", url: writer, path: "/held-deletions/compute-nodes/confirm", status: 404},
		{name: "confirm", method: "POST", url: writer, path: held, status: 200},
		{name: "forget a bad address", method: "DELETE", url: dnsURL, path: "/peer/not-an-address", status: 400},
		{name: "forget unknown peer", method: "DELETE", url: dnsURL, path: "/peer/192.0.2.99", status: 404},
		{name: "forget peer", method: "DELETE", url: dnsURL, path: "/peer/" + host, status: 200},
	}
	// Every route but the probes, closed: no token, the wrong one, and
	// the read token where it does not open.
	for _, o := range sp.operations() {
		path := concretePath(o.path)
		if o.access != "open" {
			cases = append(cases, exchange{name: "no token", method: o.method, url: closed, path: path, status: 401},
				exchange{name: "wrong token", method: o.method, url: closed, path: path, auth: "Bearer nope", status: 401})
		}
		if o.access == "write" {
			cases = append(cases, exchange{name: "read token", method: o.method, url: closed, path: path, auth: "Bearer r3ad", status: 403})
		}
	}
	seen := map[string]bool{}
	for _, tc := range cases {
		if tc.method == "" {
			tc.method = "GET"
		}
		t.Run(tc.method+" "+tc.path+" "+tc.name, func(t *testing.T) {
			req, err := http.NewRequest(tc.method, tc.url+tc.path, strings.NewReader(tc.body))
			if err != nil {
				t.Fatal(err)
			}
			if tc.auth != "" {
				req.Header.Set("Authorization", tc.auth)
			}
			resp, body := exchangeOnce(t, req)
			if resp.StatusCode != tc.status {
				t.Fatalf("status %d, want %d: %s", resp.StatusCode, tc.status, body)
			}
			o, explicit := sp.checkAnswer(t, tc.method, tc.path, resp.StatusCode, resp.Header, body)
			if explicit {
				seen[o.method+" "+o.path+" "+strconv.Itoa(resp.StatusCode)] = true
			}
			checkRequestBody(t, sp, o, tc)
		})
	}
	for _, o := range sp.operations() {
		for key := range o.obj["responses"].(map[string]any) {
			if key != "default" && !seen[o.method+" "+o.path+" "+key] {
				t.Errorf("openapi.json lists %s for %s %s, and no case got it", key, o.method, o.path)
			}
		}
	}
}

// checkRequestBody: a body the route accepts matches the request
// schema; the answer 400 means it did not.
func checkRequestBody(t *testing.T, sp *spec, o operation, tc exchange) {
	t.Helper()
	if _, ok := o.obj["requestBody"]; !ok || tc.body == "" || len(tc.body) > MaxBodyBytes || tc.status == 401 {
		return
	}
	err := sp.validate(t, o.pointer("requestBody", "content", "application/json", "schema"), []byte(tc.body))
	if accepted := tc.status != http.StatusBadRequest; accepted != (err == nil) {
		t.Errorf("body %s: answered %d, and the request schema says: %v", tc.body, tc.status, err)
	}
}

// exchangeOnce sends req and returns the answer and its body.
func exchangeOnce(t *testing.T, req *http.Request) (*http.Response, []byte) {
	t.Helper()
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp, body
}

// concretePath fills a route's parameters with values that parse.
func concretePath(p string) string {
	return strings.NewReplacer("{addr}", "192.0.2.99", "{uuid}", vmUUID, "{cause}", "re-list").Replace(p)
}

// TestErrorsAreJSON walks every route New registers with a method it
// does not have, without a token, with the wrong token, with the read
// token where it does not open, with a body over MaxBodyBytes, with a
// malformed body, and under a path it does not have: every answer is an
// Error body, with the status and code openapi.json gives.
func TestErrorsAreJSON(t *testing.T) {
	sp := loadSpec(t)
	srv := New(nil, noDNS{}, Access{Mode: schema.AuthToken, Token: "s3cret", ReadToken: "r3ad"}, nil)
	srv.SetCloud(&fakeCloud{})
	const admin = "Bearer s3cret"
	type attempt struct {
		name, method, path, auth string
		body                     io.Reader
		status                   int
		code                     string
	}
	var attempts []attempt
	for _, rt := range srv.routes {
		path := concretePath(rt.path)
		attempts = append(attempts,
			attempt{"bad method", "PATCH", path, admin, nil, 405, "MethodNotAllowed"},
			attempt{"oversized body", rt.method, path, admin, bytes.NewReader(make([]byte, MaxBodyBytes+1)), 413, "PayloadTooLarge"},
			attempt{"no such path", rt.method, path + "/x", admin, nil, 404, "ResourceNotFound"})
		if rt.level != open {
			attempts = append(attempts,
				attempt{"no token", rt.method, path, "", nil, 401, "Unauthorized"},
				attempt{"bad token", rt.method, path, "Bearer nope", nil, 401, "Unauthorized"},
				attempt{"not bearer", rt.method, path, "Basic s3cret", nil, 401, "Unauthorized"})
		}
		if rt.level == write {
			attempts = append(attempts, attempt{"read token", rt.method, path, "Bearer r3ad", nil, 403, "Forbidden"})
		}
		if rt.method == "POST" && rt.path == "/suffixes-for-vm" {
			for name, body := range map[string]string{"malformed body": `{"owner_uuid": `, "body not an object": `[]`,
				"body missing a field": `{"networks": []}`, "body of the wrong type": `{"owner_uuid": 1, "networks": []}`} {
				attempts = append(attempts, attempt{name, rt.method, path, admin, strings.NewReader(body), 400, "BadRequest"})
			}
			attempts = append(attempts, attempt{"oversized chunked body", rt.method, path, admin,
				io.MultiReader(strings.NewReader(`{"owner_uuid": "`), bytes.NewReader(bytes.Repeat([]byte("o"), MaxBodyBytes))), 413, "PayloadTooLarge"})
		}
	}
	attempts = append(attempts, attempt{"no such route", "GET", "/nothing", admin, nil, 404, "ResourceNotFound"},
		attempt{"not a path", "GET", "*", admin, nil, 400, "BadRequest"})
	for _, a := range attempts {
		t.Run(a.name+" "+a.method+" "+a.path, func(t *testing.T) {
			req := httptest.NewRequest(a.method, "/", a.body)
			req.URL.Path, req.RequestURI = a.path, a.path
			if a.name == "oversized chunked body" {
				req.ContentLength = -1 // read as it comes, as a chunked body is
			}
			if a.auth != "" {
				req.Header.Set("Authorization", a.auth)
			}
			w := httptest.NewRecorder()
			srv.ServeHTTP(w, req)
			body := w.Body.Bytes()
			if w.Code != a.status {
				t.Fatalf("status %d, want %d: %s", w.Code, a.status, body)
			}
			errorCode(a.code)(t, body)
			if _, ok := sp.operation(a.method, a.path); ok {
				sp.checkAnswer(t, a.method, a.path, w.Code, w.Header(), body)
			} else {
				sp.checkError(t, w.Header(), body)
			}
			if a.status == 405 && !strings.Contains(w.Header().Get("Allow"), srvMethod(srv, a.path)) {
				t.Errorf("Allow %q", w.Header().Get("Allow"))
			}
			if a.status == 401 && w.Header().Get("WWW-Authenticate") == "" {
				t.Error("401 without WWW-Authenticate")
			}
		})
	}
}

// srvMethod is a method srv has for a concrete path.
func srvMethod(srv *Server, path string) string {
	for _, rt := range srv.routes {
		if pathMatches(rt.path, path) {
			return rt.method
		}
	}
	return "?"
}

// TestAPIDocRouteTable keeps docs/api.md's route table and openapi.json
// the same: each row's method, path and access.
func TestAPIDocRouteTable(t *testing.T) {
	sp := loadSpec(t)
	md, err := os.ReadFile("../docs/api.md")
	if err != nil {
		t.Fatal(err)
	}
	row := regexp.MustCompile("(?m)^\\| `([A-Z]+)` \\| `([^`]+)` \\| ([a-z]+) \\|")
	var got, want []string
	for _, m := range row.FindAllStringSubmatch(string(md), -1) {
		got = append(got, m[1]+" "+m[2]+" "+m[3])
	}
	for _, o := range sp.operations() {
		want = append(want, o.method+" "+o.path+" "+o.access)
	}
	slices.Sort(got)
	slices.Sort(want)
	if !slices.Equal(got, want) {
		var rows strings.Builder
		for _, o := range sp.operations() {
			fmt.Fprintf(&rows, "| `%s` | `%s` | %s | %s |\n", o.method, o.path, o.access, o.obj["summary"])
		}
		t.Errorf("docs/api.md's routes are\n%s\nopenapi.json's\n%s\nrows for docs/api.md:\n%s",
			strings.Join(got, "\n"), strings.Join(want, "\n"), rows.String())
	}
}

func compact(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
