package knotbench

import (
	"bufio"
	"fmt"
	"io"
	"iter"

	"github.com/miekg/dns"

	"github.com/cnsd/cnsd/store"
)

// Zone is the name of the benchmark zone.
const Zone = "cns.bench.test."

// RecordTTL is the TTL cnsd gives every generated record (ttl.record in
// the child's configuration); the zone file for Knot uses the same.
const RecordTTL = 30

// The zone's shape: accounts of instancesPerAccount instances, one in
// serviceEvery of them a member of one of servicesPerAccount services.
const (
	instancesPerAccount = 30
	serviceEvery        = 3
	servicesPerAccount  = 3
)

// Records yields the first n records of a zone shaped like the ones cnsd
// generates: per instance <vm-uuid>.inst.<account-uuid> with an A and a
// TXT record (the VM's UUID); every third instance is also a member of a
// service, which adds its address and UUID to
// svcN.svc.<account-uuid> (so a service name has several A records) and
// an SRV record under _http._tcp pointing at the instance name. The
// same n always gives the same records, so the cnsd child and the zone
// file written for Knot hold the same zone.
func Records(n int) iter.Seq[store.Record] {
	return func(yield func(store.Record) bool) {
		count := 0
		emit := func(name string, t uint16, data string) bool {
			if count == n {
				return false
			}
			count++
			return yield(store.NewRecord(name, t, data, "knotbench"))
		}
		for i := 0; count < n; i++ {
			in := Nth(i)
			txt := `"` + in.VM + `"`
			if !emit(in.Name, dns.TypeA, in.Addr) || !emit(in.Name, dns.TypeTXT, txt) {
				return
			}
			if in.Service == "" {
				continue
			}
			if !emit(in.Service, dns.TypeA, in.Addr) || !emit(in.Service, dns.TypeTXT, txt) ||
				!emit("_http._tcp."+in.Service, dns.TypeSRV, "0 10 80 "+in.Name) {
				return
			}
		}
	}
}

// An Instance is one VM of the generated zone.
type Instance struct {
	VM      string // the VM's UUID
	Name    string // <vm>.inst.<account>.<zone>
	Addr    string // its IPv4 address
	Service string // the service name it is a member of, or ""
}

// Nth returns the i-th instance of the zone.
func Nth(i int) Instance {
	account := uuid(1, uint64(i/instancesPerAccount))
	in := Instance{
		VM:   uuid(2, uint64(i)),
		Addr: fmt.Sprintf("10.%d.%d.%d", i>>16&255, i>>8&255, i&255),
	}
	in.Name = in.VM + ".inst." + account + "." + Zone
	if i%serviceEvery == 0 {
		in.Service = fmt.Sprintf("svc%d.svc.%s.%s", i/serviceEvery%servicesPerAccount, account, Zone)
	}
	return in
}

// uuid is a version-4-looking UUID derived from (kind, i) by splitmix64,
// so names look like cnsd's and do not share long prefixes.
func uuid(kind, i uint64) string {
	a, b := mix(kind<<56^i), mix(^(kind<<56 ^ i))
	return fmt.Sprintf("%08x-%04x-4%03x-%04x-%012x",
		a>>32, a>>16&0xffff, a&0xfff, b>>48&0x3fff|0x8000, b&0xffffffffffff)
}

func mix(x uint64) uint64 {
	x += 0x9e3779b97f4a7c15
	x = (x ^ x>>30) * 0xbf58476d1ce4e5b9
	x = (x ^ x>>27) * 0x94d049bb133111eb
	return x ^ x>>31
}

// WriteZoneFile writes the zone of n records as a master file: apex (the
// SOA and NS records cnsd serves, so that both servers hold the same
// zone) first, then the records with RecordTTL.
func WriteZoneFile(w io.Writer, n int, apex []dns.RR) error {
	bw := bufio.NewWriterSize(w, 1<<16)
	for _, rr := range apex {
		if _, err := fmt.Fprintln(bw, rr.String()); err != nil {
			return fmt.Errorf("write zone file: %w", err)
		}
	}
	for r := range Records(n) {
		_, err := fmt.Fprintf(bw, "%s\t%d\tIN\t%s\t%s\n", r.Name, RecordTTL, dns.TypeToString[uint16(r.Type)], r.Data)
		if err != nil {
			return fmt.Errorf("write zone file: %w", err)
		}
	}
	if err := bw.Flush(); err != nil {
		return fmt.Errorf("write zone file: %w", err)
	}
	return nil
}
