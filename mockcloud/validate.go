package mockcloud

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync"
)

// params is a request's query string in the order its parameters were
// sent: the real services report unknown parameters in that order.
type params struct {
	order []string
	vals  url.Values
}

// parseParams reads a raw query string. Keys are unescaped as the
// services' query parsers do; a key sent twice keeps its first place.
func parseParams(raw string) params {
	p := params{vals: url.Values{}}
	for _, kv := range strings.Split(raw, "&") {
		if kv == "" {
			continue
		}
		k, v, _ := strings.Cut(kv, "=")
		k, err := url.QueryUnescape(k)
		if err != nil {
			continue
		}
		if uv, err := url.QueryUnescape(v); err == nil {
			v = uv
		}
		if !p.vals.Has(k) {
			p.order = append(p.order, k)
		}
		p.vals[k] = append(p.vals[k], v)
	}
	return p
}

// get returns the first value of name and whether it was sent.
func (p params) get(name string) (string, bool) {
	v, ok := p.vals[name]
	if !ok {
		return "", false
	}
	return v[0], true
}

// has reports whether name was sent.
func (p params) has(name string) bool { return p.vals.Has(name) }

// repeated lists the parameters sent more than once, in order.
func (p params) repeated() []string {
	var out []string
	for _, k := range p.order {
		if len(p.vals[k]) > 1 {
			out = append(out, k)
		}
	}
	return out
}

// refusal is the answer a real service gives to a request it does not
// accept: its status and its restify error body.
type refusal struct {
	status int
	body   apiError
}

// refusals records every request the cloud refused for what it asked
// (its parameters or the identifier in its path), for Refused.
type refusals struct {
	mu   sync.Mutex // guards list
	list []string
}

// refuse answers r with ref, logs it and records it: a client the real
// service would refuse the same way must see it happen in tests.
func (c *Cloud) refuse(w http.ResponseWriter, r *http.Request, ref *refusal) {
	c.recordRefusal(r, fmt.Sprintf("%d %s", ref.status, jsonText(ref.body)))
	writeJSON(w, ref.status, ref.body)
}

// recordRefusal logs and records that r was refused with answer (a
// status and body, or a changefeed close reason).
func (c *Cloud) recordRefusal(r *http.Request, answer string) {
	request := r.Method + " " + r.URL.RequestURI()
	c.log.Warn("request refused as the real service would", "request", request, "answer", answer)
	c.refused.mu.Lock()
	c.refused.list = append(c.refused.list, request+": "+answer)
	c.refused.mu.Unlock()
}

// Refused lists, in order, every request the cloud refused because a real
// service would refuse its parameters, path or changefeed registration
// (docs/mockcloud.md, "Validation rules"): method, path and query, then
// the status and error body or the close reason. Not-found answers for
// well-formed identifiers are not refusals.
func (c *Cloud) Refused() []string {
	c.refused.mu.Lock()
	defer c.refused.mu.Unlock()
	return slices.Clone(c.refused.list)
}

// jsonText is v as compact JSON with <, > and & as they are, the way
// JSON.stringify writes them into the services' messages.
func jsonText(v any) string {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return fmt.Sprint(v)
	}
	return strings.TrimSuffix(buf.String(), "\n")
}
