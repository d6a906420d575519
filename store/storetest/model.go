package storetest

import (
	"fmt"
	"maps"
	"slices"
	"testing"
	"time"

	"github.com/cnsd/cnsd/store"
	"github.com/cnsd/cnsd/zonegen"
)

// baseSerial is where new zones start: a time-based serial, as cnsd uses.
var baseSerial = store.TimeSerial(time.Date(2026, 11, 1, 12, 0, 0, 0, time.UTC))

// vmUUID is the UUID of test VM i.
func vmUUID(i int) string { return fmt.Sprintf("c0000000-0000-4000-8000-%012d", i) }

// vmRecords are test VM i's records in zone the way zonegen names them
// (instance names by UUID and alias, a service with an SRV record, a TXT
// with the UUID); version changes the addresses, as a VM update does.
func vmRecords(zone string, i, version int) []store.Record {
	vm := vmUUID(i)
	login := fmt.Sprintf("user%d", i%7)
	inst := fmt.Sprintf("vm-%d.inst.%s.%s.", i, login, zone)
	svc := fmt.Sprintf("web.svc.%s.%s.", login, zone)
	v4 := fmt.Sprintf("198.51.%d.%d", version%256, i%256)
	recs := []store.Record{
		{Name: vm + ".inst." + login + "." + zone + ".", Type: zonegen.TypeA, Data: v4},
		{Name: vm + ".inst." + login + "." + zone + ".", Type: zonegen.TypeTXT, Data: zonegen.QuoteTXT(vm)},
		{Name: inst, Type: zonegen.TypeA, Data: v4},
		{Name: inst, Type: zonegen.TypeAAAA, Data: fmt.Sprintf("2001:db8::%x:%x", version, i)},
		{Name: inst, Type: zonegen.TypeTXT, Data: zonegen.QuoteTXT(vm)},
		{Name: svc, Type: zonegen.TypeA, Data: v4},
		{Name: "_web._tcp." + svc, Type: zonegen.TypeSRV, Data: "0 10 80 " + inst},
	}
	for j := range recs {
		recs[j].Source = vm
	}
	slices.SortFunc(recs, store.Record.Compare)
	return recs
}

// model is what the backend should hold: the suite applies every
// successful change to it too and compares Load with it.
type model map[string]*store.ZoneData

// change builds the ZoneChange taking zone from its modelled state to one
// where the VMs in set have those records and the VMs in del are gone,
// with the diff between the two.
func (m model) change(zone string, set map[string][]store.Record, del []string, keep int) store.ZoneChange {
	c := store.ZoneChange{Zone: zone, Next: baseSerial, SetVMs: set, DelVMs: del, KeepJournal: keep}
	var old []store.Record
	if z := m[zone]; z != nil {
		c.Prev, c.Next = z.Serial, z.Serial+1
		for _, vm := range slices.Concat(slices.Collect(maps.Keys(set)), del) {
			old = append(old, z.VMs[vm]...)
		}
	}
	var added []store.Record
	for _, recs := range set {
		added = append(added, recs...)
	}
	c.Diff = store.Diff{Zone: zone, From: c.Prev, To: c.Next,
		Removed: minus(old, added), Added: minus(added, old)}
	return c
}

// drop builds the change that deletes zone.
func (m model) drop(zone string) store.ZoneChange {
	c := store.ZoneChange{Zone: zone, Drop: true}
	if z := m[zone]; z != nil {
		c.Prev, c.Next = z.Serial, z.Serial+1
	}
	return c
}

// minus returns the records of a not in b, sorted.
func minus(a, b []store.Record) []store.Record {
	var out []store.Record
	for _, r := range a {
		if !slices.Contains(b, r) {
			out = append(out, r)
		}
	}
	slices.SortFunc(out, store.Record.Compare)
	return out
}

// apply records changes the backend accepted.
func (m model) apply(changes ...store.ZoneChange) {
	for _, c := range changes {
		if c.Drop {
			delete(m, c.Zone)
			continue
		}
		z := m[c.Zone]
		if z == nil {
			z = &store.ZoneData{Name: c.Zone, VMs: map[string][]store.Record{}}
			m[c.Zone] = z
		}
		z.Serial = c.Next
		if c.Replace {
			z.VMs, z.Journal = map[string][]store.Record{}, nil
		}
		maps.Copy(z.VMs, c.SetVMs)
		for _, vm := range c.DelVMs {
			delete(z.VMs, vm)
		}
		d := c.Diff
		d.Zone = c.Zone
		z.Journal = append(z.Journal, d)
		z.Journal = z.Journal[max(len(z.Journal)-c.KeepJournal, 0):]
	}
}

// check fails t unless the backend holds exactly what m says.
func (m model) check(t *testing.T, b store.Backend) {
	t.Helper()
	got := load(t, b)
	if len(got) != len(m) {
		t.Errorf("Load: zones %v, want %v", slices.Sorted(maps.Keys(got)), slices.Sorted(maps.Keys(m)))
	}
	for name, want := range m {
		checkZone(t, got[name], want)
	}
}

// load calls Load, failing t on an error or on any reported value.
func load(t *testing.T, b store.Backend) map[string]*store.ZoneData {
	t.Helper()
	zones, err := b.Load(t.Context(), func(key string, err error) {
		t.Errorf("Load reported %s: %v", key, err)
	})
	if err != nil {
		t.Fatalf("Load: %v", err)
	}
	return zones
}

func checkZone(t *testing.T, got, want *store.ZoneData) {
	t.Helper()
	if got == nil {
		t.Errorf("zone %s missing", want.Name)
		return
	}
	if got.Name != want.Name || got.Serial != want.Serial {
		t.Errorf("zone %s: name %q serial %d, want %q serial %d", want.Name, got.Name, got.Serial, want.Name, want.Serial)
	}
	if !maps.EqualFunc(got.VMs, want.VMs, slices.Equal) {
		t.Errorf("zone %s: VMs\n got %v\nwant %v", want.Name, got.VMs, want.VMs)
	}
	if !slices.EqualFunc(got.Journal, want.Journal, diffEqual) {
		t.Errorf("zone %s: journal\n got %v\nwant %v", want.Name, got.Journal, want.Journal)
	}
}

func diffEqual(a, b store.Diff) bool {
	return a.Zone == b.Zone && a.From == b.From && a.To == b.To &&
		slices.Equal(a.Removed, b.Removed) && slices.Equal(a.Added, b.Added)
}

// vms returns the records of test VMs from..to-1 in zone.
func vms(zone string, from, to, version int) map[string][]store.Record {
	set := map[string][]store.Record{}
	for i := from; i < to; i++ {
		set[vmUUID(i)] = vmRecords(zone, i, version)
	}
	return set
}
