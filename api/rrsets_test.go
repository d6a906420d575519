package api

import (
	"context"
	"fmt"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/miekg/dns"

	"github.com/cnsd/cnsd/schema"
	"github.com/cnsd/cnsd/store"
)

// abortingDNS is a DNS server that has seen transfers abort.
type abortingDNS struct{ noDNS }

func (abortingDNS) AbortedTransfers() map[string]uint64 {
	return map[string]uint64{"dc1.example.test": 3}
}

// TestLargestRRset: a service of 180 members, 180 A records at one name,
// shows as largest_rrset 180 in GET /zones and as
// cnsd_zone_largest_rrset 180; transfers that ended early show per zone.
func TestLargestRRset(t *testing.T) {
	ctx := context.Background()
	st, err := store.Open(ctx, store.NewMemory(), store.Options{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	const zone = "dc1.example.test."
	for i := range 180 {
		vm := fmt.Sprintf("00000000-0000-4000-8000-%012d", i)
		addr := fmt.Sprintf("10.1.%d.%d", i/250, i%250+1)
		if _, err := st.CommitSource(ctx, vm, map[string][]store.Record{zone: {
			store.NewRecord(fmt.Sprintf("web%d.inst.alice.%s", i, zone), dns.TypeA, addr, vm),
			store.NewRecord("web.svc.alice."+zone, dns.TypeA, addr, vm),
		}}); err != nil {
			t.Fatal(err)
		}
	}
	srv := httptest.NewServer(New(st, abortingDNS{}, Access{Mode: schema.AuthNone}, nil))
	t.Cleanup(srv.Close)

	_, b := call(t, "GET", srv.URL+"/zones", "")
	var zones []Zone
	decode(t, b, &zones)
	if len(zones) != 1 || zones[0].LargestRRset != 180 || zones[0].Records != 360 {
		t.Errorf("GET /zones: %s, want largest_rrset 180 of 360 records", b)
	}
	_, b = call(t, "GET", srv.URL+"/metrics", "")
	for _, line := range []string{
		`cnsd_zone_largest_rrset{zone="dc1.example.test"} 180`,
		`cnsd_dns_transfers_aborted_total{zone="dc1.example.test"} 3`,
	} {
		if !strings.Contains(string(b), line+"\n") {
			t.Errorf("no line %q in:\n%s", line, grepCNSD(b))
		}
	}
}

var _ DNS = abortingDNS{}
