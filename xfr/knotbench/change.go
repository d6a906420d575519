package knotbench

import (
	"fmt"
	"os/exec"
	"strconv"
	"time"

	"github.com/miekg/dns"

	"github.com/cnsd/cnsd/store"
)

// ChangeRecord is the record the i-th change of the IXFR benchmark adds.
func ChangeRecord(i int) store.Record {
	return store.NewRecord(fmt.Sprintf("ixfr%d.%s", i, Zone), dns.TypeA, fmt.Sprintf("192.0.2.%d", i%250+1), "change")
}

// churnSources are the sources Churn's changes take turns at.
const churnSources = 100

// Churn makes the cnsd child commit k serials, the i-th replacing the
// record of one of churnSources sources with ChangeRecord(first+i), and
// returns when it has: a server that runs for long, whose zone keeps its
// size while it changes.
func (s *Server) Churn(first, k int) error {
	if s.ctl == nil {
		return fmt.Errorf("churn %s: not supported", s.Name)
	}
	if _, err := fmt.Fprintf(s.ctl, "churn %d %d\n", first, k); err != nil {
		return fmt.Errorf("churn %s: %w", s.Name, err)
	}
	return waitLine(s.lines, "changed", time.Minute)
}

// Change makes the server commit k serials, the i-th adding
// ChangeRecord(first+i), and returns when it has: the cnsd child
// through its stdin, knotd through knotc, one transaction a serial,
// which its journal keeps for IXFR. NSD (4.6) cannot be changed so.
func (s *Server) Change(first, k int) error {
	switch {
	case s.ctl != nil:
		if _, err := fmt.Fprintf(s.ctl, "change %d %d\n", first, k); err != nil {
			return fmt.Errorf("change %s: %w", s.Name, err)
		}
		return waitLine(s.lines, "changed", time.Minute)
	case s.knotc != nil:
		for i := first; i < first+k; i++ {
			r := ChangeRecord(i)
			for _, args := range [][]string{
				{"zone-begin", Zone},
				{"zone-set", Zone, r.Name, strconv.Itoa(RecordTTL), dns.TypeToString[uint16(r.Type)], r.Data},
				{"zone-commit", Zone},
			} {
				cmd := exec.Command(s.knotc[0], append(s.knotc[1:], args...)...)
				if out, err := cmd.CombinedOutput(); err != nil {
					return fmt.Errorf("change %s: knotc %v: %w: %s", s.Name, args, err, out)
				}
			}
		}
		return nil
	}
	return fmt.Errorf("change %s: not supported", s.Name)
}
