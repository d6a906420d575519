package schema

// check applies the rules that relate several fields, after the schema
// and the defaults. Every violation is reported, in file order.
func check(c *Config) error {
	var errs Errors
	add := func(err *Error) {
		if err != nil {
			errs = append(errs, err)
		}
	}
	zones := loc{}.key("forward_zones")
	catchAll := ""
	for _, z := range c.ForwardZones {
		at := zones.key(z.Name)
		add(checkNetworks(z, at, &catchAll))
		add(checkAccess(c, z.ZoneAccess, at))
	}
	add(checkAccess(c, c.ReverseZones, loc{}.key("reverse_zones")))
	add(checkAccess(c, c.CatalogZone.ZoneAccess, loc{}.key("catalog_zone")))
	if z, ok := c.Zone(c.CatalogZone.Name); ok && !c.CatalogZone.Disabled {
		add(invalid(pathOf(loc{}.key("catalog_zone").key("name")),
			"%q is also a forward zone; the catalog zone needs a name of its own", z.Name))
	}
	if c.Coalesce.Window > c.Coalesce.MaxDelay {
		add(invalid(pathOf(loc{}.key("coalesce").key("window_ms")),
			"must not exceed max_delay_ms (%d), got %d",
			c.Coalesce.MaxDelay.Milliseconds(), c.Coalesce.Window.Milliseconds()))
	}
	add(checkAPI(c.API))
	return errs.err()
}

// checkAPI rejects token settings that would not be used, so that an
// operator who set a token never believes the API closed when it is open.
func checkAPI(a APIConfig) *Error {
	at := loc{}.key(a.key)
	if a.Auth == AuthNone {
		for _, s := range []struct {
			key string
			set bool
		}{{"token", a.Token != ""}, {"token_file", a.tokenFileSet}, {"read_token", a.ReadToken != ""}} {
			if s.set {
				return invalid(pathOf(at.key(s.key)), "is set but auth is %q, which lets every request in; remove one of them", AuthNone)
			}
		}
	}
	if a.ReadToken != "" && a.ReadToken == a.Token {
		return invalid(pathOf(at.key("read_token")), "must differ from token, which opens every route (value not shown)")
	}
	return nil
}

// checkNetworks rejects a network listed twice in zone z, and a second
// catch-all zone; catchAll holds the name of the first one seen.
func checkNetworks(z Zone, at loc, catchAll *string) *Error {
	seen := make(map[string]bool, len(z.Networks))
	for i, n := range z.Networks {
		if seen[n] {
			return invalid(pathOf(at.key("networks").at(i)), "duplicate network %q", n)
		}
		seen[n] = true
		if n != "*" {
			continue
		}
		if *catchAll != "" {
			return invalid(pathOf(at.key("networks").at(i)),
				"%q makes a second catch-all zone; %q is already the catch-all zone", n, *catchAll)
		}
		*catchAll = z.Name
	}
	return nil
}

// checkAccess applies the rules of a zone's transfer settings at at.
func checkAccess(c *Config, a ZoneAccess, at loc) *Error {
	if a.HiddenPrimary && len(a.Peers) == 0 {
		return invalid(pathOf(at.key("hidden_primary")), "true needs a non-empty peers list")
	}
	if a.RequireTSIG && a.TSIGKey == "" {
		return invalid(pathOf(at.key("require_tsig")), "true needs tsig_key")
	}
	if _, ok := c.TSIGKeys[a.TSIGKey]; a.TSIGKey != "" && !ok {
		return invalid(pathOf(at.key("tsig_key")), "no key %q in tsig_keys", a.TSIGKey)
	}
	return nil
}
