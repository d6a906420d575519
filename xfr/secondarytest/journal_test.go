package secondarytest_test

import (
	"testing"

	"github.com/cnsd/cnsd/store"
	"github.com/cnsd/cnsd/xfr"
	"github.com/cnsd/cnsd/xfr/secondarytest"
)

// journalEntries is the journal bound of TestTrimmedJournal: small, so
// that a few commits move the journal past a stopped secondary's serial.
const journalEntries = 3

// TestTrimmedJournal: a secondary whose serial the journal no longer
// covers gets the whole zone, and IXFR again afterwards. Two cases: a new
// secondary that first appears after the journal was trimmed, and one
// that was stopped while the journal moved on and asks for an IXFR from
// its old serial when it comes back.
func TestTrimmedJournal(t *testing.T) {
	for _, sec := range secondaries {
		t.Run(sec.name, func(t *testing.T) {
			const zone = "fwd.cnsd.test."
			st := openStore(t, store.Options{JournalEntries: journalEntries})
			m := newZoneModel(zone, 7, 10)
			var serial uint32
			for range 2 * journalEntries {
				m.mutate()
				serial = commit(t, st, m.records())[zone]
			}
			c := listenCNSD(t)
			s := sec.start(t, secondarytest.Config{Primary: c.addr, Zones: []string{zone}})
			cfg := parseConfig(t, `{"my_name": "ns1.cnsd.test", "hostmaster": "hostmaster@cnsd.test",
				"forward_zones": {"fwd.cnsd.test": {"networks": ["*"], "peers": [%q]}}}`, peer(s))
			c.run(t, cfg, st, xfr.Options{})
			serials := []uint32{s.WaitSerial(t, zone, serial, waitTimeout)}
			step := func() {
				t.Helper()
				touched := m.mutate()
				serial = commit(t, st, m.records())[zone]
				serials = append(serials, s.WaitSerial(t, zone, serial, waitTimeout))
				sameAnswers(t, c, s, m.sample(touched), "A", "AAAA", "TXT")
			}
			step()
			step()
			transfersAre(t, c, s, s.Transfers(zone), zone, "AXFR", serials)

			// The secondary misses more serials than the journal keeps.
			s.WaitSaved(t, zone)
			s.Stop()
			for range 2 * journalEntries {
				m.mutate()
				commit(t, st, m.records())
			}
			before := len(s.Transfers(zone))
			s.Restart(t)
			// A restarted secondary may not ask before its refresh timer
			// (Knot keeps it across restarts); the next commit's NOTIFY
			// makes it ask.
			serials = serials[:0]
			step()
			step()
			after := s.Transfers(zone)[before:]
			if len(after) > 0 && after[0].Serial != serials[0] {
				// The secondary asked on its own at start, before the
				// first commit after it: that was the full transfer.
				serials = append([]uint32{after[0].Serial}, serials...)
			}
			t.Logf("%s after the restart: %v", sec.name, after)
			transfersAre(t, c, s, after, zone, "AXFR", serials)
		})
	}
}
