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
