package xfr

import (
	"strconv"
	"sync/atomic"

	"github.com/miekg/dns"
)

// rcodeCounters counts answers by response code without a lock: every
// query updates one, and the API reads them for metrics.
type rcodeCounters [32]atomic.Uint64

func (s *Server) countQuery(rcode int) {
	if rcode >= 0 && rcode < len(s.queries) {
		s.queries[rcode].Add(1)
	}
}

// QueryCounts returns how many queries (not transfers) were answered with
// each response code so far, by the code's name (NOERROR, NXDOMAIN, …).
// Codes never sent are left out.
func (s *Server) QueryCounts() map[string]uint64 {
	out := map[string]uint64{}
	for code := range s.queries {
		n := s.queries[code].Load()
		if n == 0 {
			continue
		}
		name, ok := dns.RcodeToString[code]
		if !ok {
			name = "RCODE" + strconv.Itoa(code)
		}
		out[name] = n
	}
	return out
}

// TransferCounts are the transfers served since start.
type TransferCounts struct {
	AXFR, IXFR uint64 // completed, by what was sent (an IXFR answered with the whole zone counts as AXFR)
	Refused    uint64 // refused by the ACL or TSIG
	Messages   uint64 // messages of completed transfers
	Bytes      uint64 // octets of those messages
}

type transferCounters struct {
	axfr, ixfr, refused, msgs, bytes atomic.Uint64
	aborted                          abortCounts
}

// TransferCounts returns the transfers served so far.
func (s *Server) TransferCounts() TransferCounts {
	c := &s.transfers
	return TransferCounts{AXFR: c.axfr.Load(), IXFR: c.ixfr.Load(), Refused: c.refused.Load(),
		Messages: c.msgs.Load(), Bytes: c.bytes.Load()}
}

// countTransfer adds a completed transfer of kind "axfr" or "ixfr".
func (s *Server) countTransfer(kind string, x *stream) {
	c := &s.transfers
	if kind == "axfr" {
		c.axfr.Add(1)
	} else {
		c.ixfr.Add(1)
	}
	c.msgs.Add(uint64(x.msgs))
	c.bytes.Add(uint64(x.bytes))
}
