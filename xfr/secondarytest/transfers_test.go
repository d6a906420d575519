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
		{"bind over ipv6", parseBIND, `
23-Nov-2026 12:52:10.101 transfer of 'v6.test/IN' from ::1#41321: requesting IXFR for serial 1
23-Nov-2026 12:52:10.101 transfer of 'v6.test/IN' from ::1#41321: got incremental response
23-Nov-2026 12:52:10.101 transfer of 'v6.test/IN' from ::1#41321: Transfer status: success
23-Nov-2026 12:52:10.101 transfer of 'v6.test/IN' from ::1#41321: Transfer completed: 1 messages, 5 records, 355 bytes, 0.001 secs (355000 bytes/sec) (serial 2)
`, []Transfer{{"v6.test.", "IXFR", 2}}},
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
		{"nsd transfers", parseNSD, `
[2026-11-23 09:22:53.451] nsd[26043]: info: notify for a.test. from 127.0.0.1 serial 1
[2026-11-23 09:22:53.453] nsd[26041]: info: xfrd: zone a.test committed "received update to serial 1 at 2026-11-23T09:22:53 from 127.0.0.1@41891"
[2026-11-23 09:22:53.456] nsd[26042]: info: zone a.test. received update to serial 1 at 2026-11-23T09:22:53 from 127.0.0.1@41891 of 1654 bytes in 0.000233 seconds
[2026-11-23 09:22:53.468] nsd[26041]: info: zone a.test serial 0 is updated to 1
[2026-11-23 09:22:53.479] nsd[26041]: info: xfrd: zone a.test committed "received update to serial 2 at 2026-11-23T09:22:53 from 127.0.0.1@41891"
[2026-11-23 09:22:54.492] nsd[26041]: info: zone a.test serial 1 is updated to 2
`, []Transfer{{"a.test.", "", 1}, {"a.test.", "", 2}}},
		{"nsd refused", parseNSD, `
[2026-11-23 09:24:15.666] nsd[27051]: error: xfrd: zone a.test received error code REFUSED from 127.0.0.1@56124
`, nil},
		{"powerdns axfr then ixfr", parsePowerDNS, `
Nov 23 09:29:26 AXFR-in zone: 'a.test', primary: '127.0.0.1', retrieval finished
Nov 23 09:29:26 AXFR-in zone: 'a.test', primary: '127.0.0.1', storage transaction started
Nov 23 09:29:26 AXFR-in zone: 'a.test', primary: '127.0.0.1', zone committed with serial 1
Nov 23 09:29:27 IXFR-in zone: 'a.test', primary: '127.0.0.1', starting IXFR
Nov 23 09:29:27 IXFR-in zone: 'a.test', primary: '127.0.0.1', got 1 delta, zone committed with serial 2
Nov 23 09:29:27 IXFR-in zone: 'a.test', primary: '127.0.0.1', got 0 deltas, zone committed with serial 0
`, []Transfer{{"a.test.", "AXFR", 1}, {"a.test.", "IXFR", 2}}},
		{"powerdns refused", parsePowerDNS, `
Nov 23 09:32:10 XFR-in zone: 'a.test', primary: '127.0.0.1', unable to xfr zone (ResolverException): AXFR chunk error: Query Refused (This was attempt number 1. Excluding zone from slave-checks until 1795426331)
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
