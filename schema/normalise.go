package schema

// rename is one RFD 1 key name and the name cnsd uses instead.
type rename struct{ old, current string }

// topRenames apply to the top-level object.
var topRenames = []rename{{"dns_zones", "forward_zones"}}

// zoneRenames apply to each forward zone and to reverse_zones.
var zoneRenames = []rename{{"slaves", "peers"}, {"hidden_master", "hidden_primary"}}

// normalise rewrites the RFD 1 spelling in tree v to the current one, in
// place and keeping the order of keys. Setting both spellings of one key
// is an error, and so is setting both api and its shipped spelling
// api_server (which has another shape, so it is not rewritten). Values of
// the wrong type are left for the schema.
func normalise(v any) error {
	top, ok := v.(*object)
	if !ok {
		return nil
	}
	if err := renameKeys(top, nil, topRenames); err != nil {
		return err
	}
	if top.has("api") && top.has("api_server") {
		return invalid("", "both %q and %q are set; use only %q", "api_server", "api", "api")
	}
	if zones, ok := top.vals["forward_zones"].(*object); ok {
		for _, name := range zones.keys {
			z, ok := zones.vals[name].(*object)
			if !ok {
				continue
			}
			at := loc{}.key("forward_zones").key(name)
			if err := renameKeys(z, at, zoneRenames); err != nil {
				return err
			}
		}
	}
	if r, ok := top.vals["reverse_zones"].(*object); ok {
		return renameKeys(r, loc{}.key("reverse_zones"), zoneRenames)
	}
	return nil
}

// renameKeys applies renames to object o at location at.
func renameKeys(o *object, at loc, renames []rename) error {
	for _, r := range renames {
		if !o.has(r.old) {
			continue
		}
		if o.has(r.current) {
			return invalid(pathOf(at), "both %q and %q are set; use only %q", r.old, r.current, r.current)
		}
		o.rename(r.old, r.current)
	}
	return nil
}
