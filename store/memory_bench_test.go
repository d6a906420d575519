package store

import (
	"fmt"
	"runtime"
	"testing"
	"unsafe"

	"github.com/cnsd/cnsd/zonegen"
)

// cloudVM is VM i of a cloud shaped like the zones cnsd generates: its
// instance name <vm>.inst.<account>.<zone> with an A and a TXT record
// (the UUID), a PTR record in a reverse zone of a /16, and for one VM
// in three membership of one of three services of its account: an A
// and a TXT record at svcN.svc.<account>.<zone>, which the service's
// other members share, and an SRV record pointing at the instance name.
// Every string is built for the VM alone, as zonegen builds them per
// view: the service names are equal across members, not shared.
func cloudVM(i int) zonegen.Contribution {
	const zone = "cns.example.com."
	vm := fmt.Sprintf("%08x-1111-4222-8333-%012x", i*2654435761%(1<<32), i)
	account := fmt.Sprintf("%08x-aaaa-4bbb-8ccc-%012x", i/30, i/30)
	addr := fmt.Sprintf("10.%d.%d.%d", i>>16&255, i>>8&255, i&255)
	inst := vm + ".inst." + account + "." + zone
	txt := `"` + vm + `"`
	recs := []Record{
		{Name: inst, Type: zonegen.TypeA, Data: addr, Source: vm},
		{Name: inst, Type: zonegen.TypeTXT, Data: txt, Source: vm},
	}
	if i%3 == 0 {
		svc := fmt.Sprintf("svc%d.svc.%s.%s", i/3%3, account, zone)
		recs = append(recs,
			Record{Name: svc, Type: zonegen.TypeA, Data: addr, Source: vm},
			Record{Name: svc, Type: zonegen.TypeTXT, Data: txt, Source: vm},
			Record{Name: "_http._tcp." + svc, Type: zonegen.TypeSRV, Data: "0 10 80 " + inst, Source: vm})
	}
	rev := fmt.Sprintf("%d.10.in-addr.arpa.", i>>16&255)
	ptr := Record{Name: fmt.Sprintf("%d.%d.%s", i&255, i>>8&255, rev), Type: zonegen.TypePTR, Data: inst, Source: vm}
	return contrib(vm, map[string][]Record{zone: recs, rev: {ptr}})
}

// heapNow collects twice and returns the heap in use.
func heapNow() uint64 {
	var m runtime.MemStats
	runtime.GC()
	runtime.GC()
	runtime.ReadMemStats(&m)
	return m.HeapAlloc
}

// BenchmarkSnapshotMemory commits a cloud of ~1M records (250k VMs of
// cloudVM; 25k with -short) to a Store over Memory in one batch and
// reports the heap it holds per served record after collecting, with
// the contributions' own memory (their records and strings) counted as
// the Store's, since it keeps them. The parts (memParts) are counted by
// walking the Store; "other" is what they leave of the measured heap:
// maps, the allocator's rounding and the runtime's.
func BenchmarkSnapshotMemory(b *testing.B) {
	n := 250_000
	if testing.Short() {
		n = 25_000
	}
	for b.Loop() {
		base := heapNow()
		batch := make([]zonegen.Contribution, n)
		for i := range batch {
			batch[i] = cloudVM(i)
		}
		s, _ := open(b, NewMemory(), Options{})
		commit(b, s, batch...)
		batch = nil
		total := float64(heapNow() - base)
		parts := memParts(s)
		served := 0
		for _, z := range s.Zones() {
			served += s.Snapshot(z).Len()
		}
		per := func(v float64) float64 { return v / float64(served) }
		b.ReportMetric(float64(served), "records")
		b.ReportMetric(per(total), "heap-B/record")
		other := total
		for _, p := range parts {
			b.ReportMetric(per(p.bytes), p.name+"-B/record")
			other -= p.bytes
		}
		b.ReportMetric(per(other), "other-B/record")
		runtime.KeepAlive(s)
	}
}

type memPart struct {
	name  string
	bytes float64
}

const recordSize = float64(unsafe.Sizeof(Record{}))

// memParts counts what the Store's structures take, each array at its
// capacity and each string's bytes once (by address).
func memParts(s *Store) []memPart {
	var strs, vmRecs, nodeRecs, nodes, tree, backend, journal float64
	seen := map[*byte]bool{}
	str := func(v string) {
		if p := unsafe.StringData(v); v != "" && !seen[p] {
			seen[p] = true
			strs += float64(len(v))
		}
	}
	within := func(recs, in []Record) bool {
		if len(recs) == 0 || cap(in) == 0 {
			return false
		}
		p, lo := uintptr(unsafe.Pointer(&recs[0])), uintptr(unsafe.Pointer(&in[:1][0]))
		return p >= lo && p < lo+uintptr(cap(in))*unsafe.Sizeof(Record{})
	}
	for zone, vms := range s.vms {
		for _, recs := range vms {
			vmRecs += float64(cap(recs)) * recordSize
			for _, r := range recs {
				str(r.Name)
				str(r.Data)
				str(r.Source)
			}
		}
		snap := s.Snapshot(zone)
		_, jb := snap.Journal()
		journal += float64(jb)
		var walk func(t *tnode)
		walk = func(t *tnode) {
			tree += float64(unsafe.Sizeof(*t)) + float64(cap(t.keys))*16 + float64(cap(t.vals)+cap(t.kids))*8
			for _, k := range t.kids {
				walk(k)
			}
			for i, nd := range t.vals {
				str(t.keys[i])
				nodes += float64(unsafe.Sizeof(*nd))
				if nd.x != nil {
					nodes += float64(unsafe.Sizeof(*nd.x)) + float64(cap(nd.x.more))*24
				}
				if len(nd.recs) > 0 && !within(nd.recs, vms[nd.recs[0].Source]) {
					nodeRecs += float64(cap(nd.recs)) * recordSize
				}
				for _, r := range nd.recs {
					str(r.Name)
					str(r.Data)
				}
			}
		}
		if snap.names.root != nil {
			walk(snap.names.root)
		}
	}
	if m, ok := s.b.(*Memory); ok {
		for _, z := range m.zones {
			for vm, recs := range z.VMs {
				if !within(recs, s.vms[z.Name][vm]) {
					backend += float64(cap(recs)) * recordSize
				}
			}
			for _, d := range z.Journal {
				journal += float64(cap(d.Removed)+cap(d.Added)) * recordSize
			}
		}
	}
	return []memPart{{"strings", strs}, {"vmrecs", vmRecs}, {"noderecs", nodeRecs}, {"nodes", nodes},
		{"tree", tree}, {"backend", backend}, {"journal", journal}}
}
