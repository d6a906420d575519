package api

import (
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/cnsd/cnsd/schema"
	"github.com/cnsd/cnsd/store"
)

// defaultTTL is what GET /vm/:uuid shows until SetTTL: the configuration's
// defaults (docs/operator-guide.md, Configuration).
var defaultTTL = schema.TTLConfig{Record: 30 * time.Second, NS: time.Hour}

// SetTTL makes GET /vm/:uuid show records with the TTLs of c, as the DNS
// server serves them; cnsd calls it at start and on every reload.
func (s *Server) SetTTL(c schema.TTLConfig) { s.ttl.Store(&c) }

// SetRecords fills in vm's Names and Zones from the VM's records, given
// per zone, served with the TTLs of ttl: what GET /vm/:uuid answers from
// the store and cnsadm preview from an evaluation. Names are the names
// where the VM has a TXT record holding its uuid, as Triton CNS listed
// them; Zones holds every record, zones and records sorted.
func (vm *VM) SetRecords(byZone map[string][]store.Record, ttl schema.TTLConfig) {
	txt := `"` + vm.UUID + `"`
	vm.Names, vm.Zones = []string{}, []VMZone{}
	for _, zone := range slices.Sorted(maps.Keys(byZone)) {
		recs := slices.Clone(byZone[zone])
		if len(recs) == 0 {
			continue
		}
		slices.SortFunc(recs, store.Record.CompareRR)
		recs = slices.CompactFunc(recs, func(a, b store.Record) bool { return a.CompareRR(b) == 0 })
		z := VMZone{Zone: strings.TrimSuffix(zone, "."), Records: make([]Record, len(recs))}
		for i, r := range recs {
			name := strings.TrimSuffix(r.Name, ".")
			z.Records[i] = Record{Name: name, Type: r.Type.String(), Value: r.Data, TTL: recordTTL(r, ttl)}
			if r.Type.String() == "TXT" && r.Data == txt {
				vm.Names = append(vm.Names, name)
			}
		}
		vm.Zones = append(vm.Zones, z)
	}
	slices.Sort(vm.Names)
	vm.Names = slices.Compact(vm.Names)
}

// recordTTL is the TTL the DNS server serves r with: NS records get the
// NS TTL, every other the record TTL (xfr does the same).
func recordTTL(r store.Record, c schema.TTLConfig) uint32 {
	d := c.Record
	if r.Type.String() == "NS" {
		d = c.NS
	}
	return uint32(max(d, 0) / time.Second)
}

// recordsOf returns the records the VM uuid provides in every zone the
// store holds, reading each zone whole.
func (s *Server) recordsOf(uuid string) map[string][]store.Record {
	out := map[string][]store.Record{}
	for _, zone := range s.zones.Zones() {
		snap := s.zones.Snapshot(zone)
		if snap == nil {
			continue // dropped meanwhile
		}
		for r := range snap.Provided(uuid) {
			out[zone] = append(out[zone], r)
		}
	}
	return out
}
