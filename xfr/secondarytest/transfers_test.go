package secondarytest

import (
	"slices"
	"testing"
)

// The parsers are checked against real logs by TestSmoke; these cases
// pin the line formats they rely on, so that they also run where the
// servers are not installed, and the corner cases (failures, fallback).
func TestParseLogs(t *testing.T) {
	tests := []struct {
		name  string
		parse func(string) []Transfer
		log   string
		want  []Transfer
	}{
		{"bind axfr then ixfr", parseBIND, `
23-Nov-2026 00:02:24.492 transfer of 'a.test/IN' from 127.0.0.1#57612: got nonincremental response
23-Nov-2026 00:02:24.492 transfer of 'a.test/IN' from 127.0.0.1#57612: Transfer status: success
23-Nov-2026 00:02:24.492 transfer of 'a.test/IN' from 127.0.0.1#57612: Transfer completed: 1 messages, 4 records, 243 bytes, 0.001 secs (243000 bytes/sec) (serial 1)
23-Nov-2026 00:02:24.540 transfer of 'a.test/IN' from 127.0.0.1#57612: requesting IXFR for serial 1
23-Nov-2026 00:02:24.540 transfer of 'a.test/IN' from 127.0.0.1#57612: got incremental response
23-Nov-2026 00:02:24.540 transfer of 'a.test/IN' from 127.0.0.1#57612: Transfer status: success
23-Nov-2026 00:02:24.540 transfer of 'a.test/IN' from 127.0.0.1#57612: Transfer completed: 1 messages, 5 records, 355 bytes, 0.001 secs (355000 bytes/sec) (serial 2)
`, []Transfer{{"a.test.", "AXFR", 1}, {"a.test.", "IXFR", 2}}},
		{"bind refused", parseBIND, `
23-Nov-2026 00:07:35.576 transfer of 'a.test/IN' from 127.0.0.1#56301: failed while receiving responses: REFUSED
23-Nov-2026 00:07:35.576 transfer of 'a.test/IN' from 127.0.0.1#56301: Transfer status: REFUSED
23-Nov-2026 00:07:35.576 transfer of 'a.test/IN' from 127.0.0.1#56301: Transfer completed: 0 messages, 0 records, 0 bytes, 0.001 secs (0 bytes/sec) (serial 0)
`, nil},
		{"knot axfr, axfr-style ixfr, ixfr", parseKnot, `
2026-11-23T00:02:24+0000 info: [a.test.] AXFR, incoming, remote 127.0.0.1@37517, finished, 0.00 seconds, 1 messages, 243 bytes
2026-11-23T00:02:24+0000 info: [a.test.] refresh, remote 127.0.0.1@37517, zone updated, 0.00 seconds, serial none -> 1, expires in 86400 seconds
2026-11-23T00:02:24+0000 info: [a.test.] IXFR, incoming, remote 127.0.0.1@37517, receiving AXFR-style IXFR
2026-11-23T00:02:24+0000 info: [a.test.] AXFR, incoming, remote 127.0.0.1@37517, finished, 0.00 seconds, 1 messages, 273 bytes
2026-11-23T00:02:24+0000 info: [a.test.] refresh, remote 127.0.0.1@37517, zone updated, 0.00 seconds, serial 1 -> 2, expires in 86400 seconds
2026-11-23T00:02:24+0000 info: [a.test.] IXFR, incoming, remote 127.0.0.1@37517, finished, 0.00 seconds, 1 messages, 355 bytes
2026-11-23T00:02:24+0000 info: [a.test.] refresh, remote 127.0.0.1@37517, zone updated, 0.01 seconds, serial 2 -> 3, expires in 86400 seconds
`, []Transfer{{"a.test.", "AXFR", 1}, {"a.test.", "AXFR", 2}, {"a.test.", "IXFR", 3}}},
		{"knot ixfr that cannot be stored falls back to axfr", parseKnot, `
2026-11-23T00:02:06+0000 info: [a.test.] IXFR, incoming, remote 127.0.0.1@33083, finished, 0.00 seconds, 1 messages, 414 bytes
2026-11-23T00:02:06+0000 warning: [a.test.] IXFR, incoming, remote 127.0.0.1@33083, failed to store changes (not exists)
2026-11-23T00:02:06+0000 warning: [a.test.] refresh, incoming, remote 127.0.0.1@33083, fallback to AXFR (not exists)
2026-11-23T00:02:06+0000 info: [a.test.] AXFR, incoming, remote 127.0.0.1@33083, finished, 0.00 seconds, 1 messages, 273 bytes
2026-11-23T00:02:06+0000 info: [a.test.] refresh, remote 127.0.0.1@33083, zone updated, 0.00 seconds, serial 1 -> 2, expires in 86400 seconds
`, []Transfer{{"a.test.", "AXFR", 2}}},
		{"knot refused", parseKnot, `
2026-11-23T00:07:37+0000 warning: [a.test.] AXFR, incoming, remote 127.0.0.1@51749, server responded with error 'REFUSED'
2026-11-23T00:07:37+0000 error: [a.test.] refresh, failed (no usable master), next retry at 2026-11-23T00:07:47+0000
`, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.parse(tt.log); !slices.Equal(got, tt.want) {
				t.Errorf("got %v\nwant %v", got, tt.want)
			}
		})
	}
}
