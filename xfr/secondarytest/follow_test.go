package secondarytest_test

import (
	"fmt"
	"maps"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/miekg/dns"

	"github.com/cnsd/cnsd/store"
	"github.com/cnsd/cnsd/xfr"
	"github.com/cnsd/cnsd/xfr/secondarytest"
)

// zoneModel is a forward zone the test changes at random: names with A,
// AAAA and TXT records.
type zoneModel struct {
	zone    string // absolute
	rnd     *rand.Rand
	names   map[string][]store.Record
	removed []string // names that had records once
	next    int
}

func newZoneModel(zone string, seed uint64, n int) *zoneModel {
	m := &zoneModel{zone: zone, rnd: rand.New(rand.NewPCG(seed, 0)), names: map[string][]store.Record{}}
	for range n {
		m.add()
	}
	return m
}

func (m *zoneModel) addr() string {
	return fmt.Sprintf("10.%d.%d.%d", m.rnd.IntN(256), m.rnd.IntN(256), 1+m.rnd.IntN(254))
}

func (m *zoneModel) add() string {
	name := fmt.Sprintf("h%d.%s", m.next, m.zone)
	m.next++
	rs := []store.Record{rec(name, dns.TypeA, m.addr())}
	if m.rnd.IntN(3) == 0 {
		rs = append(rs, rec(name, dns.TypeAAAA, fmt.Sprintf("fd00::%x", m.rnd.IntN(1<<16))))
	}
	m.names[name] = rs
	return name
}

// pick returns an existing name at random.
func (m *zoneModel) pick() string {
	names := slices.Sorted(maps.Keys(m.names))
	return names[m.rnd.IntN(len(names))]
}

// mutate makes one random change and returns the names it touched.
func (m *zoneModel) mutate() []string {
	switch op := m.rnd.IntN(5); {
	case op == 0 || len(m.names) < 5:
		return []string{m.add()}
	case op == 1:
		name := m.pick()
		delete(m.names, name)
		m.removed = append(m.removed, name)
		return []string{name}
	case op == 2: // renumber: the A record changes
		name := m.pick()
		rs := slices.DeleteFunc(slices.Clone(m.names[name]), func(r store.Record) bool { return uint16(r.Type) == dns.TypeA })
		m.names[name] = append(rs, rec(name, dns.TypeA, m.addr()))
		return []string{name}
	case op == 3: // a second address
		name := m.pick()
		m.names[name] = append(slices.Clone(m.names[name]), rec(name, dns.TypeA, m.addr()))
		return []string{name}
	default: // a TXT record comes or goes
		name := m.pick()
		rs := slices.Clone(m.names[name])
		if i := slices.IndexFunc(rs, func(r store.Record) bool { return uint16(r.Type) == dns.TypeTXT }); i >= 0 {
			m.names[name] = slices.Delete(rs, i, i+1)
		} else {
			m.names[name] = append(rs, rec(name, dns.TypeTXT, fmt.Sprintf(`"v=%d"`, m.rnd.IntN(1000))))
		}
		return []string{name}
	}
}

// records is the zone as CommitSource takes it, each name's records
// sorted and without duplicates.
func (m *zoneModel) records() map[string][]store.Record {
	var all []store.Record
	for _, rs := range m.names {
		all = append(all, rs...)
	}
	slices.SortFunc(all, store.Record.Compare)
	all = slices.CompactFunc(all, func(a, b store.Record) bool { return a.Compare(b) == 0 })
	return map[string][]store.Record{m.zone: all}
}

// sample is the names to compare after a change: the touched ones, a few
// unchanged ones and a removed one.
func (m *zoneModel) sample(touched []string) []string {
	out := slices.Clone(touched)
	for range 3 {
		out = append(out, m.pick())
	}
	if len(m.removed) > 0 {
		out = append(out, m.removed[m.rnd.IntN(len(m.removed))])
	}
	return out
}

// initialNames is the size of the zone TestFollowCommits starts from:
// large enough that the first transfer takes several messages.
const initialNames = 2000

// TestFollowCommits: a secondary transfers the zone once in full, then
// follows every one of many commits by NOTIFY and IXFR, and answers like
// cnsd after each.
func TestFollowCommits(t *testing.T) {
	for _, sec := range secondaries {
		t.Run(sec.name, func(t *testing.T) {
			t.Parallel() // the secondaries are apart; this halves the wall time
			const zone = "fwd.cnsd.test."
			began := time.Now()
			st := openStore(t, store.Options{})
			m := newZoneModel(zone, 4, initialNames)
			serials := []uint32{commit(t, st, m.records())[zone]}
			c := listenCNSD(t)
			s := sec.start(t, secondarytest.Config{Primary: c.addr, Zones: []string{zone}})
			cfg := parseConfig(t, `{"my_name": "ns1.cnsd.test", "hostmaster": "hostmaster@cnsd.test",
				"forward_zones": {"fwd.cnsd.test": {"networks": ["*"], "peers": [%q]}}}`, peer(s))
			c.run(t, cfg, st, xfr.Options{})
			s.WaitSerial(t, zone, serials[0], waitTimeout)
			sameAnswers(t, c, s, m.sample(nil), "A", "AAAA", "TXT")
			commits := sec.commits
			for i := range commits {
				touched := m.mutate()
				serial, ok := commit(t, st, m.records())[zone]
				if !ok {
					t.Fatalf("commit %d changed nothing", i)
				}
				serials = append(serials, serial)
				s.WaitSerial(t, zone, serial, waitTimeout)
				sameAnswers(t, c, s, m.sample(touched), "A", "AAAA", "TXT")
				if t.Failed() {
					t.Fatalf("stopping after commit %d", i)
				}
			}
			transfersAre(t, c, s, s.Transfers(zone), zone, "AXFR", serials)
			// The SOA refresh is an hour: NOTIFY, not polling, made the
			// secondary ask.
			if n := s.Notifies(zone); n < commits {
				t.Errorf("%s logged %d NOTIFYs for %d commits", sec.name, n, commits)
			}
			t.Logf("%s followed %d commits in %v", sec.name, commits, time.Since(began).Round(time.Millisecond))
		})
	}
}
