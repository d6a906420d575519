package zonegen

import (
	"slices"
	"sort"
)

// Union is the union of many VMs' contributions: per zone and name, the
// records of every contributor, each tagged with its source VM. Replacing
// or deleting one VM's contribution touches only that VM's records, so two
// VMs that share a name (the same alias, say) both stay published and
// removing one never removes the other's records. It is the in-memory
// model of what the store keeps, and the oracle tests compare stores and
// pipelines against. Not safe for concurrent use.
type Union struct {
	zones map[string]map[string][]Record // zone → name → records
	byVM  map[string]Contribution
}

// NewUnion returns an empty Union.
func NewUnion() *Union {
	return &Union{zones: map[string]map[string][]Record{}, byVM: map[string]Contribution{}}
}

// Put replaces the contribution of c.VM with c. An unresolved
// contribution is ignored: the VM keeps what it published before.
func (u *Union) Put(c Contribution) {
	if c.Unresolved {
		return
	}
	u.Delete(c.VM)
	if len(c.Zones) == 0 {
		return
	}
	u.byVM[c.VM] = c
	for _, z := range c.Zones {
		names := u.zones[z.Zone]
		if names == nil {
			names = map[string][]Record{}
			u.zones[z.Zone] = names
		}
		for _, r := range z.Records {
			names[r.Name] = append(names[r.Name], r)
		}
	}
}

// Delete removes every record vm contributed; names and zones left empty
// disappear.
func (u *Union) Delete(vm string) {
	old, ok := u.byVM[vm]
	if !ok {
		return
	}
	delete(u.byVM, vm)
	for _, z := range old.Zones {
		names := u.zones[z.Zone]
		for _, r := range z.Records {
			recs := slices.DeleteFunc(names[r.Name], func(x Record) bool { return x.Source == vm })
			if len(recs) == 0 {
				delete(names, r.Name)
			} else {
				names[r.Name] = recs
			}
		}
		if len(names) == 0 {
			delete(u.zones, z.Zone)
		}
	}
}

// Contribution returns the last contribution put for vm.
func (u *Union) Contribution(vm string) (Contribution, bool) {
	c, ok := u.byVM[vm]
	return c, ok
}

// Lookup returns the records at name in zone, sorted.
func (u *Union) Lookup(zone, name string) []Record {
	recs := slices.Clone(u.zones[zone][name])
	slices.SortFunc(recs, Record.Compare)
	return recs
}

// Zones lists the zones that have records, sorted.
func (u *Union) Zones() []string {
	out := make([]string, 0, len(u.zones))
	for z := range u.zones {
		out = append(out, z)
	}
	sort.Strings(out)
	return out
}

// Records returns every record of zone, sorted.
func (u *Union) Records(zone string) []Record {
	var out []Record
	for _, recs := range u.zones[zone] {
		out = append(out, recs...)
	}
	slices.SortFunc(out, Record.Compare)
	return out
}
