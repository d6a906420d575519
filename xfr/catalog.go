package xfr

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"io"
	"log/slog"
	"maps"
	"slices"
	"strings"
	"sync/atomic"
	"time"

	"github.com/miekg/dns"

	"github.com/cnsd/cnsd/schema"
	"github.com/cnsd/cnsd/store"
)

// Contributors of records that come from the configuration rather than
// from a VM: the catalog zone's, and the NS records of forward and reverse
// zones.
const (
	catalogSource = "catalog"
	configSource  = "config"
)

// catalogConfig returns how the catalog zone is served, or false when it
// is disabled. Its NS is "invalid." (RFC 9432 §4.1), set by newSettings.
func catalogConfig(cfg *schema.Config) (*zoneConf, bool) {
	if cfg.CatalogZone.Disabled || cfg.CatalogZone.Name == "" {
		return nil, false
	}
	name := dns.Fqdn(strings.ToLower(cfg.CatalogZone.Name))
	return &zoneConf{name: name, kind: catalogZone, access: cfg.CatalogZone.ZoneAccess, mname: dns.Fqdn(strings.ToLower(cfg.MyName))}, true
}

// CatalogStore is what the catalog maintainer reads zones from and writes
// to: the store.
type CatalogStore interface {
	Source
	CommitSource(ctx context.Context, source string, zones map[string][]store.Record) ([]store.Diff, error)
	Keep(ctx context.Context, zones []string) error
}

var _ CatalogStore = (*store.Store)(nil)

// Catalog keeps in the store the zones the configuration declares: every
// configured forward zone exists (store.Keep), with its SOA, before any
// record is in it; and the catalog zone (RFC 9432, version 2) lists every
// served zone, so that a secondary configured with the catalog alone
// serves each forward zone and every reverse zone as it appears. It
// writes to the store, so only the process that holds the writer lease
// may run it.
type Catalog struct {
	st      CatalogStore
	log     *slog.Logger
	cfg     atomic.Pointer[schema.Config]
	kick    chan struct{}
	last    []string // members written last, sorted
	zone    string   // catalog zone written last
	written bool     // last and zone are in the store
	keptFor *schema.Config
	// nsWritten is the NS targets last stored, by zone; nil before the
	// first write.
	nsWritten map[string][]string
}

// NewCatalog returns a maintainer of cfg's catalog zone over st.
func NewCatalog(cfg *schema.Config, st CatalogStore, log *slog.Logger) *Catalog {
	if log == nil {
		log = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	c := &Catalog{st: st, log: log.With("component", "catalog"), kick: make(chan struct{}, 1)}
	c.cfg.Store(cfg)
	return c
}

// SetConfig makes cfg the configuration the catalog follows.
func (c *Catalog) SetConfig(cfg *schema.Config) {
	c.cfg.Store(cfg)
	select {
	case c.kick <- struct{}{}:
	default:
	}
}

// catalogRetry is how long Run waits before writing again after a
// failed write.
const catalogRetry = 2 * time.Second

// Run rewrites the catalog whenever the set of served zones changes,
// until ctx ends.
func (c *Catalog) Run(ctx context.Context) error {
	changed := c.st.Watch()
	if u, ok := c.st.(interface{ Unwatch(<-chan struct{}) }); ok {
		defer u.Unwatch(changed)
	}
	for {
		// A failed write (the store is down) is tried again after a
		// while even if nothing changes meanwhile.
		var retry <-chan time.Time
		if err := c.update(ctx); err != nil {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			c.log.Error("cannot write the catalog zone; retrying", "err", err, "retry_in", catalogRetry)
			retry = time.After(catalogRetry)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-changed:
		case <-c.kick:
		case <-retry:
		}
	}
}

// update writes the catalog's records when its members changed.
func (c *Catalog) update(ctx context.Context) error {
	cfg := c.cfg.Load()
	st := newSettings(cfg)
	if c.keptFor != cfg {
		if err := c.st.Keep(ctx, slices.Collect(maps.Keys(st.forward))); err != nil {
			return err
		}
		c.keptFor = cfg
	}
	if err := c.writeNS(ctx, st); err != nil {
		return err
	}
	zone, members := "", []string(nil)
	if st.catalog != nil {
		zone = st.catalog.name
		members = catalogMembers(st, c.st)
	}
	if c.written && zone == c.zone && slices.Equal(members, c.last) {
		return nil
	}
	zones := map[string][]store.Record{}
	if zone != "" {
		zones[zone] = catalogRecords(zone, members)
	}
	// Records of a catalog zone renamed or disabled go with the zones
	// left out of the map.
	if _, err := c.st.CommitSource(ctx, catalogSource, zones); err != nil {
		return err
	}
	if zone != c.zone || !slices.Equal(members, c.last) {
		c.log.Info("catalog zone written", "zone", zone, "members", len(members))
	}
	c.zone, c.last, c.written = zone, members, true
	return nil
}

// writeNS stores the NS records of every configured forward zone (kept
// by store.Keep) and of every reverse zone that holds records of VMs, so
// that a change of secondaries is a new serial that reaches the
// secondaries by IXFR. A reverse zone whose last VM record goes loses its
// NS records too, and with them the zone.
func (c *Catalog) writeNS(ctx context.Context, st *settings) error {
	want := map[string][]string{}
	for name, zc := range st.forward {
		want[name] = zc.ns
	}
	for _, z := range st.served(c.st) {
		if z.conf.kind == reverseZone && holdsVMRecords(z.snap) {
			want[z.name] = z.conf.ns
		}
	}
	if c.nsWritten != nil && maps.EqualFunc(want, c.nsWritten, slices.Equal) {
		return nil
	}
	ns := map[string][]store.Record{}
	for name, hosts := range want {
		for _, host := range hosts {
			ns[name] = append(ns[name], store.NewRecord(name, dns.TypeNS, host, configSource))
		}
	}
	if _, err := c.st.CommitSource(ctx, configSource, ns); err != nil {
		return err
	}
	c.nsWritten = want
	return nil
}

// holdsVMRecords reports whether snap holds records besides the NS
// records writeNS stores at its apex.
func holdsVMRecords(snap *store.Snapshot) bool {
	stored := 0
	for _, r := range snap.Lookup(snap.Zone()) {
		if uint16(r.Type) == dns.TypeNS && r.Source == configSource {
			stored++
		}
	}
	return snap.Len() > stored
}

// catalogMembers lists the zones the catalog names: every served zone the
// store holds, but the catalog itself.
func catalogMembers(st *settings, src Source) []string {
	var out []string
	for _, z := range st.served(src) {
		if z.conf.kind != catalogZone && z.snap != nil {
			out = append(out, z.name)
		}
	}
	return out
}

// catalogRecords are the catalog zone's records (RFC 9432 §4.2): its
// schema version and one PTR per member, under a label derived from the
// member's name, so it is unique and stays the same as zones come and go.
func catalogRecords(catalog string, members []string) []store.Record {
	recs := []store.Record{store.NewRecord(catalog, dns.TypeNS, "invalid.", catalogSource),
		store.NewRecord("version."+catalog, dns.TypeTXT, `"2"`, catalogSource)}
	for _, m := range members {
		recs = append(recs, store.NewRecord(memberID(m)+".zones."+catalog, dns.TypePTR, m, catalogSource))
	}
	return recs
}

// memberID is the member zone's unique label: the first 8 octets of the
// SHA-256 of its lower-case presentation name, in hex.
func memberID(zone string) string {
	sum := sha256.Sum256([]byte(strings.ToLower(zone)))
	return hex.EncodeToString(sum[:8])
}
