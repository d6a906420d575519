package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/netip"
	"slices"
	"strings"

	"github.com/cnsd/cnsd/api/client"
	"github.com/cnsd/cnsd/schema"
)

// bindDefaultMaxRecords is BIND's max-records-per-type default (9.18.28
// and later; earlier versions have no such limit).
const bindDefaultMaxRecords = 100

// bindConfig is what bind-config prints from.
type bindConfig struct {
	cfg        *schema.Config // nil when the configuration did not load
	primary    netip.AddrPort
	key        string // -key; empty: each zone's configured tsig_key
	maxRecords int    // -max-records-per-type; -1: sized from the zones
}

// cmdBindConfig prints BIND statements that make a BIND server a
// secondary of every zone cnsd serves, or of its catalog zone, with the
// max-records-per-type each zone's largest RRset needs.
func cmdBindConfig(ctx context.Context, e *env, args []string) error {
	fs := flag.NewFlagSet("bind-config", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	catalog := fs.Bool("catalog", false, "print the catalog-zone set-up (BIND 9.18+) instead of one zone statement per zone")
	primary := fs.String("primary", "", "cnsd's `ADDRESS` as the secondaries reach it, with an optional port (default: its first dns.listen address in the configuration)")
	key := fs.String("key", "", "sign transfers with the TSIG key `NAME` of the configuration's tsig_keys (default: each zone's tsig_key)")
	maxRecords := fs.Int("max-records-per-type", -1, "set BIND's max-records-per-type to `N` (0: no limit) instead of sizing it from the zones' largest RRsets")
	if err := fs.Parse(args); err != nil {
		return fmt.Errorf("bind-config: %w (cnsadm help bind-config)", err)
	}
	if err := wantArgs("bind-config", fs.Args(), 0, 0); err != nil {
		return err
	}
	cfg, cfgErr := schema.Load(e.configPath)
	if cfgErr != nil {
		cfg = nil
	}
	b := &bindConfig{cfg: cfg, key: strings.ToLower(*key), maxRecords: *maxRecords}
	var err error
	if b.primary, err = b.primaryAddr(*primary, cfgErr); err != nil {
		return fmt.Errorf("bind-config: %w", err)
	}
	if b.key != "" {
		if cfg == nil {
			return fmt.Errorf("bind-config: -key needs the configuration, for the key's secret: %w", cfgErr)
		}
		if _, ok := cfg.TSIGKeys[b.key]; !ok {
			return fmt.Errorf("bind-config: -key %s: no such key in the configuration's tsig_keys", *key)
		}
	}
	var zones []client.Zone
	if !*catalog || b.maxRecords < 0 {
		if zones, err = e.api.Zones(ctx); err != nil {
			return err
		}
	}
	if *catalog {
		return b.printCatalog(e.stdout, zones)
	}
	return b.printZones(e.stdout, zones)
}

// primaryAddr is cnsd's address from -primary, or else from the
// configuration's first dns.listen address.
func (b *bindConfig) primaryAddr(flagValue string, cfgErr error) (netip.AddrPort, error) {
	if flagValue != "" {
		return parsePrimary(flagValue)
	}
	if b.cfg == nil || len(b.cfg.DNS.Listen) == 0 {
		return netip.AddrPort{}, fmt.Errorf("give -primary ADDRESS (the configuration gives none: %v)", cfgErr)
	}
	ap, err := parsePrimary(b.cfg.DNS.Listen[0])
	if err == nil && ap.Addr().IsUnspecified() {
		err = fmt.Errorf("dns.listen %s is every address, not one a secondary can reach", b.cfg.DNS.Listen[0])
	}
	if err != nil {
		return netip.AddrPort{}, fmt.Errorf("give -primary ADDRESS: %w", err)
	}
	return ap, nil
}

// parsePrimary reads an IP address with an optional port (53):
// 192.0.2.1, 192.0.2.1:5353, 2001:db8::1 or [2001:db8::1]:5353.
func parsePrimary(s string) (netip.AddrPort, error) {
	if ap, err := netip.ParseAddrPort(s); err == nil {
		return netip.AddrPortFrom(ap.Addr().Unmap(), ap.Port()), nil
	}
	if a, err := netip.ParseAddr(strings.TrimSuffix(strings.TrimPrefix(s, "["), "]")); err == nil {
		return netip.AddrPortFrom(a.Unmap(), 53), nil
	}
	return netip.AddrPort{}, fmt.Errorf("%q is not an IP address with an optional port (192.0.2.1, 192.0.2.1:5353, 2001:db8::1, [2001:db8::1]:5353): BIND's primaries are addresses", s)
}

// primaries is the element of a primaries list for cnsd signed with key:
// BIND writes the port apart ("192.0.2.1 port 5353"), never "addr:port".
func (b *bindConfig) primaries(key string) string {
	s := b.primary.Addr().String()
	if b.primary.Port() != 53 {
		s += fmt.Sprintf(" port %d", b.primary.Port())
	}
	if key != "" {
		s += fmt.Sprintf(" key %q", key)
	}
	return s
}

// zoneKey is the TSIG key transfers of zone are signed with: -key, or
// the zone's tsig_key in the configuration.
func (b *bindConfig) zoneKey(zone string) string {
	if b.key != "" || b.cfg == nil {
		return b.key
	}
	if zone == b.cfg.CatalogZone.Name {
		return b.cfg.CatalogZone.TSIGKey
	}
	if z, ok := b.cfg.Zone(zone); ok {
		return z.TSIGKey
	}
	if strings.HasSuffix(zone, ".arpa") {
		return b.cfg.ReverseZones.TSIGKey
	}
	return ""
}

// printKeys prints the key statements of the keys used, once each.
func (b *bindConfig) printKeys(w io.Writer, used []string) {
	slices.Sort(used)
	for _, name := range slices.Compact(used) {
		if name == "" {
			continue
		}
		k := b.cfg.TSIGKeys[name]
		fmt.Fprintf(w, "key %q {\n\talgorithm %s;\n\tsecret %q;\n};\n", name, k.Algorithm, k.Secret)
	}
}

// maxRecordsFor is the max-records-per-type for RRsets of up to largest
// records, with the comment that says why, or 0 when BIND's default is
// enough: twice the largest RRset, so that services can double before
// the secondary refuses the zone.
func (b *bindConfig) maxRecordsFor(largest int) (int, string) {
	if b.maxRecords >= 0 {
		return b.maxRecords, "// set with cnsadm bind-config -max-records-per-type (0: no limit)"
	}
	if 2*largest <= bindDefaultMaxRecords {
		return 0, ""
	}
	return 2 * largest, fmt.Sprintf("// the largest RRset has %d records (a service's members): BIND 9.18.28+ refuses\n\t// a zone with an RRset over max-records-per-type (default 100); 2 x %d leaves room", largest, largest)
}

func (b *bindConfig) printZones(w io.Writer, zones []client.Zone) error {
	var used []string
	for _, z := range zones {
		if !b.isCatalog(z.Name) {
			used = append(used, b.zoneKey(z.Name))
		}
	}
	if err := b.checkKeys(used); err != nil {
		return err
	}
	b.printKeys(w, used)
	fmt.Fprintf(w, "%s\n// Put in named.conf's options: serial-query-rate 1000;\n", strings.ReplaceAll(serialQueryRateComment, "\t", ""))
	for _, z := range zones {
		if b.isCatalog(z.Name) {
			continue
		}
		fmt.Fprintf(w, "zone %q {\n\ttype secondary;\n\tprimaries { %s; };\n\tfile %q;\n\t%s\n\tcheck-names ignore;\n",
			z.Name, b.primaries(b.zoneKey(z.Name)), "cnsd/"+z.Name+".db", checkNamesComment)
		if n, why := b.maxRecordsFor(z.LargestRRset); n > 0 || b.maxRecords == 0 {
			fmt.Fprintf(w, "\t%s\n\tmax-records-per-type %d;\n", why, n)
		}
		fmt.Fprintln(w, "};")
	}
	return nil
}

// serialQueryRateComment says why a secondary of cnsd raises BIND's
// serial-query-rate.
const serialQueryRateComment = "// BIND acts on at most serial-query-rate (default 20) NOTIFYs and refreshes a second,\n" +
	"\t// all zones together: a change that gives many zones a new serial reaches it ~2 s late"

// printCatalog prints the catalog-zone set-up. Member zones take their
// options from the options block, so max-records-per-type is set there,
// sized from the largest RRset of any zone.
func (b *bindConfig) printCatalog(w io.Writer, zones []client.Zone) error {
	name := "catalog.cnsd.invalid"
	if b.cfg != nil && b.cfg.CatalogZone.Name != "" {
		name = b.cfg.CatalogZone.Name
	}
	key := b.zoneKey(name)
	if err := b.checkKeys([]string{key}); err != nil {
		return err
	}
	largest := 0
	for _, z := range zones {
		largest = max(largest, z.LargestRRset)
	}
	b.printKeys(w, []string{key})
	fmt.Fprintf(w, "options {\n\tallow-notify { %s; };\n\t%s\n\tcheck-names secondary ignore;\n\t%s\n\tserial-query-rate 1000;\n",
		b.primary.Addr(), checkNamesComment, serialQueryRateComment)
	if n, why := b.maxRecordsFor(largest); n > 0 || b.maxRecords == 0 {
		fmt.Fprintf(w, "\t%s\n\tmax-records-per-type %d;\n", why, n)
	}
	fmt.Fprintf(w, "\tcatalog-zones {\n\t\tzone %q\n\t\t\tdefault-primaries { %s; }\n\t\t\tzone-directory \"cnsd\";\n\t};\n};\n", name, b.primaries(key))
	fmt.Fprintf(w, "zone %q {\n\ttype secondary;\n\tprimaries { %s; };\n\tfile %q;\n};\n", name, b.primaries(key), name+".db")
	return nil
}

func (b *bindConfig) isCatalog(zone string) bool {
	return b.cfg != nil && zone == b.cfg.CatalogZone.Name
}

// checkKeys fails when a zone's configured key is missing from
// tsig_keys (schema validation rules this out; a hand-edited file may
// not have been validated by this version).
func (b *bindConfig) checkKeys(used []string) error {
	for _, k := range used {
		if k == "" {
			continue
		}
		if _, ok := b.cfg.TSIGKeys[k]; !ok {
			return errors.New("bind-config: TSIG key " + k + " is not in the configuration's tsig_keys")
		}
	}
	return nil
}

// checkNamesComment says why bind-config turns BIND's check-names off:
// a service tagged "_name._tcp" has its A, AAAA and TXT records at an
// owner with underscores, as in Triton CNS (docs/differences.md), which
// BIND's default for secondary zones (check-names secondary warn) logs
// at every load.
const checkNamesComment = "// service names _name._tcp carry A/AAAA records (see cnsd's docs/differences.md)"
