package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/miekg/dns"

	"github.com/cnsd/cnsd/api"
	"github.com/cnsd/cnsd/store/redis"
	"github.com/cnsd/cnsd/store/redistest"
)

// readiness asks p's GET /ready; status 0 when the API does not answer.
func readiness(p *cnsdProcess) (int, api.Ready) {
	return readinessAt(fmt.Sprintf("http://127.0.0.1:%d", p.apiPort))
}

// readinessAt asks GET /ready of the API at base.
func readinessAt(base string) (int, api.Ready) {
	var r api.Ready
	resp, err := authed.Get(base + "/ready")
	if err != nil {
		return 0, r
	}
	defer resp.Body.Close()
	_ = json.NewDecoder(resp.Body).Decode(&r)
	return resp.StatusCode, r
}

// metricLines returns the lines of p's GET /metrics that start with
// prefix.
func metricLines(t *testing.T, p *cnsdProcess, prefix string) []string {
	t.Helper()
	return metricLinesAt(t, fmt.Sprintf("http://127.0.0.1:%d", p.apiPort), prefix)
}

// metricLinesAt is metricLines of the API at base.
func metricLinesAt(t *testing.T, base, prefix string) []string {
	t.Helper()
	resp, err := authed.Get(base + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, l := range strings.Split(string(b), "\n") {
		if strings.HasPrefix(l, prefix) {
			out = append(out, l)
		}
	}
	return out
}

// storedZones lists the zones Redis holds, read by a client of its own.
func storedZones(t *testing.T, url string) []string {
	t.Helper()
	r, err := redis.Open(context.Background(), url, redis.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	zones, err := r.Zones(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return zones
}

// TestRedisWithoutAOF: the writer writes to a Redis that persists with an
// append-only file; it refuses one without (ready says why, the log and
// the metrics too, nothing is written), unless store.redis_accept_no_aof
// accepts the risk, which it warns about at start.
func TestRedisWithoutAOF(t *testing.T) {
	const zone = "a.example.test."
	for _, tc := range []struct {
		name       string
		redisArgs  []string
		storeExtra string
		writes     bool
		logLine    string
		metrics    []string
	}{
		{name: "aof", writes: true, logLine: "redis persists with an append-only file",
			metrics: []string{`cnsd_redis_aof{appendfsync="always"} 1`, "cnsd_store_writes_refused 0", "cnsd_store_writer 1", "cnsd_store_up 1",
				"cnsd_redis_replicas 0", "cnsd_redis_commits_held_total 0"}},
		{name: "no aof", redisArgs: []string{"--appendonly", "no"}, logLine: "refusing to write the store",
			metrics: []string{`cnsd_redis_aof{appendfsync="always"} 0`, "cnsd_store_writes_refused 1", "cnsd_store_writer 0"}},
		{name: "no aof, accepted", redisArgs: []string{"--appendonly", "no"}, storeExtra: `"redis_accept_no_aof": true`,
			writes: true, logLine: "writing anyway as store.redis_accept_no_aof says",
			metrics: []string{`cnsd_redis_aof{appendfsync="always"} 0`, "cnsd_store_writes_refused 0", "cnsd_store_writer 1"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := redistest.Start(t, redistest.WithArgs(tc.redisArgs...))
			p := startOnRedisWith(t, srv.URL(), `"a.example.test": {"networks": ["*"]}`, tc.storeExtra)
			waitFor(t, "the log line "+tc.logLine, func() bool { return strings.Contains(p.log.String(), tc.logLine) })
			if tc.writes {
				var last *dns.Msg
				t.Cleanup(func() {
					if t.Failed() {
						t.Logf("the last answer to SOA %s: %v", zone, last)
						if resp, err := authed.Get(fmt.Sprintf("http://127.0.0.1:%d/metrics", p.apiPort)); err == nil {
							b, _ := io.ReadAll(resp.Body)
							resp.Body.Close()
							for _, l := range strings.Split(string(b), "\n") {
								if strings.Contains(l, "rrl") || strings.Contains(l, "queries_total") {
									t.Log(l)
								}
							}
						}
					}
				})
				waitFor(t, "the writer's SOA", func() bool {
					last = ask(p.dns, zone, dns.TypeSOA)
					return last != nil && last.Rcode == dns.RcodeSuccess && len(last.Answer) == 1
				})
				waitFor(t, "ready", func() bool { code, _ := readiness(p); return code == http.StatusOK })
			} else {
				var ready api.Ready
				waitFor(t, "GET /ready to say why not", func() bool {
					code, r := readiness(p)
					ready = r
					return code == http.StatusServiceUnavailable && len(r.Reasons) > 0
				})
				if !strings.Contains(strings.Join(ready.Reasons, " "), "appendonly is no") {
					t.Errorf("GET /ready reasons %q do not name appendonly", ready.Reasons)
				}
				if zones := storedZones(t, srv.URL()); len(zones) != 0 {
					t.Errorf("Redis without AOF holds zones %v; the writer should refuse", zones)
				}
			}
			for _, want := range tc.metrics {
				name := want[:strings.IndexAny(want, "{ ")]
				got := metricLines(t, p, name)
				if !slices.Contains(got, want) {
					t.Errorf("metrics %s = %q, want %q", name, got, want)
				}
			}
		})
	}
}
