package main

import (
	"context"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/cnsd/cnsd/store/redis"
	"github.com/miekg/dns"

	"github.com/cnsd/cnsd/mockcloud"
	"github.com/cnsd/cnsd/store/redistest"
)

// oldRedisLimit is how long the writer used to survive Redis being down
// (its lease TTL) before it exited; the outage tests last longer.
const oldRedisLimit = 5 * time.Second

// TestWriterRidesOutRedisOutage: Redis is killed for longer than the
// writer used to survive while the cloud changes; cnsd does not exit,
// answers DNS from its last zones, says it is not ready and keeps the
// changes (one per VM); when Redis comes back from its AOF, the changes
// are committed, and Redis holds exactly what cnsd serves.
func TestWriterRidesOutRedisOutage(t *testing.T) {
	srv := redistest.Start(t)
	cloud := mockcloud.New(cloudFixture(), nil)
	const zone = "cloud.example.test."
	c := startOverMockWith(t, cloud, `"cloud.example.test": {"networks": ["*"]}`, func(c *overCloud) {
		c.store = `"redis": "` + srv.URL() + `"`
	})
	inst := cloudVM + ".inst." + cloudOwner + "." + zone
	waitFor(t, "the VM published", func() bool { return answers(c.dns, inst, "192.0.2.11") })
	before := serialOf(c.dns, zone)

	srv.Kill()
	down := time.Now()
	if _, err := c.cloud.SetTags(cloudVM, map[string]any{"triton.cns.services": "web,api"}); err != nil {
		t.Fatal(err)
	}
	newVM := cloudFixture().VMs[0]
	newVM.UUID, newVM.Alias = "00000002-0000-4000-8000-000000000002", "web2"
	newVM.NICs = []mockcloud.NIC{{Interface: "net0", MAC: "90:b8:d0:00:00:12", NICTag: "external", IP: "192.0.2.12", NetworkUUID: cloudNet}}
	if _, err := c.cloud.CreateVM(newVM); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "both VMs' changes pending", func() bool {
		return slices.Contains(metricLinesAt(t, c.api, "cnsd_store_pending_sources"), "cnsd_store_pending_sources 2")
	})
	waitFor(t, "GET /ready to say Redis is unreachable", func() bool {
		code, r := readinessAt(c.api)
		return code == http.StatusServiceUnavailable && strings.Contains(strings.Join(r.Reasons, " "), "redis is unreachable")
	})
	time.Sleep(time.Until(down.Add(oldRedisLimit + 2*time.Second)))
	if !answers(c.dns, inst, "192.0.2.11") || serialOf(c.dns, zone) != before {
		t.Fatalf("after %v without Redis, DNS does not answer from the last zones (serial %d, was %d)",
			time.Since(down).Round(time.Millisecond), serialOf(c.dns, zone), before)
	}
	if answers(c.dns, "api.svc."+cloudOwner+"."+zone, "192.0.2.11") {
		t.Fatal("a change made while Redis is down is served before it was committed")
	}

	srv.Restart()
	waitFor(t, "the changes made during the outage committed", func() bool {
		return answers(c.dns, "api.svc."+cloudOwner+"."+zone, "192.0.2.11") &&
			answers(c.dns, newVM.UUID+".inst."+cloudOwner+"."+zone, "192.0.2.12")
	})
	waitFor(t, "nothing pending", func() bool {
		return slices.Contains(metricLinesAt(t, c.api, "cnsd_store_pending_sources"), "cnsd_store_pending_sources 0")
	})
	// The writer kept its lease and the changes it held: one that
	// stepped down would have started writing again with a new pipeline
	// that lists the cloud anew.
	if n := len(c.stderr.Lines("writing the store")); n != 1 {
		t.Errorf("the writer started writing %d times, want once:\n%s", n, c.stderr.String())
	}
	if got := serialOf(c.dns, zone); got == before {
		t.Fatalf("serial still %d after the commit", got)
	}
	served, stored := servedRecords(t, c.dns, zone), storedRecords(t, srv.URL(), zone)
	if !slices.Equal(served, stored) {
		t.Fatalf("Redis holds\n%s\ncnsd serves\n%s", strings.Join(stored, "\n"), strings.Join(served, "\n"))
	}
	t.Logf("Redis down %v; %d records committed after it came back", oldRedisLimit+2*time.Second, len(stored))
}

// TestRedisDownAtStart: cnsd starts while Redis is down, answers GET
// /ready with why it is not ready, retries without exiting, and writes
// its zone once Redis is up.
func TestRedisDownAtStart(t *testing.T) {
	srv := redistest.Start(t)
	srv.Kill()
	const zone = "a.example.test."
	p := startOnRedis(t, srv.URL(), `"a.example.test": {"networks": ["*"]}`)
	waitFor(t, "GET /ready to say the zones are not loaded", func() bool {
		code, r := readiness(p)
		return code == http.StatusServiceUnavailable && slices.ContainsFunc(r.Reasons, func(s string) bool {
			return strings.Contains(s, "not been loaded")
		})
	})
	// Retries at 0.2, 0.4, 0.8, 1.6, 3.2 and 5 s: six of them take
	// longer than cnsd used to survive.
	waitFor(t, "six retries", func() bool { return len(p.log.Lines("redis unreachable; retrying")) >= 6 })
	if r := ask(p.dns, zone, dns.TypeSOA); r == nil {
		t.Fatal("DNS does not answer while Redis is down")
	}
	srv.Restart()
	waitFor(t, "the writer's SOA", func() bool { return serialOf(p.dns, zone) != 0 })
	waitFor(t, "ready", func() bool { code, _ := readiness(p); return code == http.StatusOK })
}

// servedRecords transfers zone and returns its records but the SOA as
// "name type data", sorted.
func servedRecords(t *testing.T, addr, zone string) []string {
	t.Helper()
	m := new(dns.Msg)
	m.SetAxfr(zone)
	ch, err := (&dns.Transfer{}).In(m, addr)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for env := range ch {
		if env.Error != nil {
			t.Fatal(env.Error)
		}
		for _, rr := range env.RR {
			if rr.Header().Rrtype == dns.TypeSOA {
				continue
			}
			data := strings.TrimPrefix(rr.String(), rr.Header().String())
			out = append(out, rr.Header().Name+" "+dns.TypeToString[rr.Header().Rrtype]+" "+data)
		}
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// storedRecords reads zone from Redis and returns its records as
// "name type data", sorted.
func storedRecords(t *testing.T, url, zone string) []string {
	t.Helper()
	r, err := redis.Open(context.Background(), url, redis.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	zones, err := r.Load(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	zd := zones[zone]
	if zd == nil {
		t.Fatalf("Redis holds no zone %s", zone)
	}
	var out []string
	for _, recs := range zd.VMs {
		for _, rec := range recs {
			out = append(out, rec.Name+" "+dns.TypeToString[uint16(rec.Type)]+" "+rec.Data)
		}
	}
	slices.Sort(out)
	return slices.Compact(out)
}
