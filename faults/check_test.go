package faults

import (
	"encoding/json"
	"fmt"
	"maps"
	"net/http"
	"regexp"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/miekg/dns"
)

// soaSerial asks addr for zone's SOA; ok is false unless it answers with one.
func soaSerial(addr, zone string) (serial uint32, ok bool) {
	m := new(dns.Msg)
	m.SetQuestion(zone, dns.TypeSOA)
	c := dns.Client{Timeout: 500 * time.Millisecond}
	r, _, err := c.Exchange(m, addr)
	if err != nil || r.Rcode != dns.RcodeSuccess || len(r.Answer) != 1 {
		return 0, false
	}
	soa, ok := r.Answer[0].(*dns.SOA)
	if !ok {
		return 0, false
	}
	return soa.Serial, true
}

// axfr transfers zone from addr and returns its records other than the
// SOA, as sorted text, and the serial.
func axfr(addr, zone string) ([]string, uint32, error) {
	m := new(dns.Msg)
	m.SetAxfr(zone)
	tr := dns.Transfer{DialTimeout: 2 * time.Second, ReadTimeout: 10 * time.Second}
	ch, err := tr.In(m, addr)
	if err != nil {
		return nil, 0, err
	}
	var out []string
	var serial uint32
	for env := range ch {
		if env.Error != nil {
			return nil, 0, env.Error
		}
		for _, rr := range env.RR {
			if soa, ok := rr.(*dns.SOA); ok {
				serial = soa.Serial
				continue
			}
			out = append(out, strings.ToLower(rr.String()))
		}
	}
	slices.Sort(out)
	return slices.Compact(out), serial, nil
}

// zonesOf lists the zones nd's API says it serves, absolute.
func zonesOf(nd *node) ([]string, error) {
	body, err := nd.get("/zones")
	if err != nil {
		return nil, err
	}
	var zs []struct{ Name string }
	if err := json.Unmarshal([]byte(body), &zs); err != nil {
		return nil, fmt.Errorf("GET /zones: %w", err)
	}
	out := make([]string, len(zs))
	for i, z := range zs {
		out[i] = dns.Fqdn(z.Name)
	}
	return out, nil
}

// serialLess is RFC 1982's a < b.
func serialLess(a, b uint32) bool { return a != b && int32(b-a) > 0 }

// serialWatch polls the SOA of every zone on every node and on BIND and
// records each time a server answers a lower serial than it did before.
type serialWatch struct {
	e    *env
	stop chan struct{}
	done chan struct{}

	mu          sync.Mutex        // guards what follows
	last        map[string]uint32 // "server zone" → highest serial seen
	zones       map[string]bool   // every zone any node listed
	regressions []string
}

func (e *env) watchSerials() *serialWatch {
	w := &serialWatch{e: e, stop: make(chan struct{}), done: make(chan struct{}),
		last: map[string]uint32{}, zones: map[string]bool{forwardZone: true, catalogZone: true}}
	go w.run()
	e.t.Cleanup(w.end)
	return w
}

func (w *serialWatch) run() {
	defer close(w.done)
	tick := time.NewTicker(200 * time.Millisecond)
	defer tick.Stop()
	for {
		select {
		case <-w.stop:
			return
		case <-tick.C:
			w.poll()
		}
	}
}

// poll reads every serial once.
func (w *serialWatch) poll() {
	servers := map[string]string{}
	for name, sec := range w.e.secondaries() {
		servers[name] = sec.Addr().String()
	}
	for _, nd := range w.e.nodes {
		if nd.alive() {
			servers[nd.name] = nd.dns
			if zs, err := zonesOf(nd); err == nil {
				w.mu.Lock()
				for _, z := range zs {
					w.zones[z] = true
				}
				w.mu.Unlock()
			}
		}
	}
	w.mu.Lock()
	zones := slices.Sorted(maps.Keys(w.zones))
	w.mu.Unlock()
	for name, addr := range servers {
		for _, zone := range zones {
			s, ok := soaSerial(addr, zone)
			if !ok {
				continue
			}
			key := name + " " + zone
			w.mu.Lock()
			if prev, seen := w.last[key]; seen && serialLess(s, prev) {
				w.regressions = append(w.regressions, fmt.Sprintf("%s served %s at serial %d after %d (%s)",
					name, zone, s, prev, time.Now().Format("15:04:05.000")))
			} else if !seen || serialLess(prev, s) {
				w.last[key] = s
			}
			w.mu.Unlock()
		}
	}
}

func (w *serialWatch) end() {
	select {
	case <-w.stop:
	default:
		close(w.stop)
	}
	<-w.done
}

// servedBy returns the latest serial the watch saw the server called
// name serve, by zone.
func (w *serialWatch) servedBy(name string) map[string]uint32 {
	w.mu.Lock()
	defer w.mu.Unlock()
	out := map[string]uint32{}
	for key, s := range w.last {
		if server, zone, ok := strings.Cut(key, " "); ok && server == name {
			out[zone] = s
		}
	}
	return out
}

// found returns the regressions seen so far.
func (w *serialWatch) found() []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return slices.Clone(w.regressions)
}

// bindRefusals are BIND's lines saying a primary's serial is lower than
// the one it holds: it then keeps its copy and stays stale.
var bindRefusals = regexp.MustCompile(`(?m)^.*received from (master|primary).*< ours.*$`)

// finish ends a scenario: the churn stops, held deletions are confirmed,
// and every live node and secondary must converge on what a fresh cnsd computes
// from the cloud as it now is, with no serial ever going backwards and no
// node having exited on its own.
func (e *env) finish() {
	e.t.Helper()
	e.stopChurn()
	for _, nd := range e.nodes {
		if !nd.alive() {
			// A supervisor would start it again; the data must still
			// converge, and the exit is reported below.
			e.t.Logf("%s is not running; starting it again as a supervisor would", nd.name)
			nd.start()
		}
	}
	oracle := e.newNode("oracle", fmt.Sprintf(`{"path": %q}`, e.t.TempDir()+"/oracle.db"), false)
	oracle.writeConfig()
	oracle.start()
	e.waitFor(180*time.Second, "every node and BIND to equal a fresh cnsd", func() string {
		e.confirmHolds()
		return e.compare(oracle)
	})
	e.logConverged(oracle)
	oracle.stop()
	e.watch.end()
	for _, r := range e.watch.found() {
		e.t.Errorf("serial went backwards: %s", r)
	}
	if lines := bindRefusals.FindAllString(e.bind.Log(), -1); len(lines) > 0 {
		e.t.Errorf("BIND kept a higher serial than its primary's %d times, e.g.: %s", len(lines), lines[0])
	}
	for _, nd := range e.nodes {
		for _, x := range nd.ownExits() {
			e.t.Errorf("%s exited on its own: %s", nd.name, x)
		}
	}
}

// confirmHolds confirms every mass deletion a node holds, as an operator
// would after checking that the VMs are gone, and logs it.
func (e *env) confirmHolds() {
	for _, nd := range e.nodes {
		if !nd.alive() || !nd.writer() {
			continue
		}
		body, err := nd.get("/held-deletions")
		if err != nil {
			continue
		}
		var holds []struct{ Cause string }
		if json.Unmarshal([]byte(body), &holds) != nil {
			continue
		}
		for _, h := range holds {
			if _, err := nd.call(http.MethodPost, "/held-deletions/"+h.Cause+"/confirm"); err == nil {
				e.t.Logf("%s held a mass deletion (%s); confirmed it", nd.name, h.Cause)
			}
		}
	}
}

// logConverged says how much was compared, so that a pass over nothing
// shows.
func (e *env) logConverged(oracle *node) {
	zones, _ := zonesOf(oracle)
	records := 0
	for _, z := range zones {
		rs, _, _ := axfr(oracle.dns, z)
		records += len(rs)
	}
	e.watch.mu.Lock()
	watched := len(e.watch.last)
	e.watch.mu.Unlock()
	e.t.Logf("converged on a fresh cnsd: %d zones, %d records; serials watched on %d server-zone pairs", len(zones), records, watched)
}

// compare returns "" when every node runs and serves the oracle's zones with
// the oracle's records and every secondary serves each at the nodes'
// serial with the same records, else
// the first difference.
func (e *env) compare(oracle *node) string {
	want, err := zonesOf(oracle)
	if err != nil || !slices.Contains(want, forwardZone) {
		return fmt.Sprintf("the oracle lists zones %v (%v)", want, err)
	}
	for _, nd := range e.nodes {
		if !nd.alive() {
			return nd.name + " is not running"
		}
		got, err := zonesOf(nd)
		if err != nil {
			return fmt.Sprintf("%s: %v", nd.name, err)
		}
		if !slices.Equal(got, want) {
			return fmt.Sprintf("%s serves zones %v, the oracle %v", nd.name, got, want)
		}
		for _, zone := range want {
			if zone == catalogZone {
				continue // the oracle's catalog is its own (no peers)
			}
			theirs, _, err1 := axfr(oracle.dns, zone)
			ours, serial, err2 := axfr(nd.dns, zone)
			if err1 != nil || err2 != nil {
				return fmt.Sprintf("AXFR %s: oracle %v, %s %v", zone, err1, nd.name, err2)
			}
			if d := difference(ours, theirs); d != "" {
				return fmt.Sprintf("%s %s differs from the oracle: %s", nd.name, zone, d)
			}
			if !nd.peers {
				continue
			}
			for name, sec := range e.secondaries() {
				if b, ok := soaSerial(sec.Addr().String(), zone); !ok || b != serial {
					return fmt.Sprintf("%s serves %s at %d (answers %v), %s at %d", name, zone, b, ok, nd.name, serial)
				}
				// At the same serial, the same records: a secondary
				// can hold other ones under a serial a failover lost.
				held, _, err := axfr(sec.Addr().String(), zone)
				if err != nil {
					return fmt.Sprintf("AXFR %s from %s: %v", zone, name, err)
				}
				if d := difference(held, theirs); d != "" {
					return fmt.Sprintf("%s %s at serial %d differs from the oracle: %s", name, zone, serial, d)
				}
			}
		}
	}
	return ""
}

// difference describes how got and want (sorted) differ, or "".
func difference(got, want []string) string {
	var extra, missing []string
	for _, r := range got {
		if _, ok := slices.BinarySearch(want, r); !ok {
			extra = append(extra, r)
		}
	}
	for _, r := range want {
		if _, ok := slices.BinarySearch(got, r); !ok {
			missing = append(missing, r)
		}
	}
	if len(extra) == 0 && len(missing) == 0 {
		return ""
	}
	cut := func(s []string) []string { return s[:min(len(s), 3)] }
	return fmt.Sprintf("%d extra %q, %d missing %q", len(extra), cut(extra), len(missing), cut(missing))
}
