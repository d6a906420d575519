package xfr

import (
	"net/netip"
	"slices"
	"strings"

	"github.com/miekg/dns"

	"github.com/cnsd/cnsd/schema"
	"github.com/cnsd/cnsd/store"
)

// zoneKind says where a served zone comes from.
type zoneKind int

const (
	forwardZone zoneKind = iota // configured in forward_zones
	reverseZone                 // generated from the addresses seen
	catalogZone                 // the RFC 9432 catalog of all the others
)

// settings is one configuration as the server uses it. It never changes:
// SetConfig swaps in a new one, and a query or transfer keeps the one it
// started with.
type settings struct {
	cfg     *schema.Config
	forward map[string]*zoneConf // absolute lower-case name → zone
	reverse *zoneConf            // the access settings of every reverse zone (name empty)
	catalog *zoneConf            // nil when no catalog zone is configured
	answers *answerCache         // this configuration's packed answers (answercache.go)

	mname, rname string
	recordTTL    uint32
	nsTTL        uint32
	refresh      uint32
	retry        uint32
	expire       uint32
	minimum      uint32
}

// zoneConf is how one zone (or every reverse zone) is served.
type zoneConf struct {
	name   string // absolute, lower-case; empty for the reverse template
	kind   zoneKind
	access schema.ZoneAccess
	ns     []string // absolute NS host names
	mname  string
}

// servedZone is one zone a question falls in, at the snapshot a query or
// transfer works from. snap is nil for a configured zone the store does
// not hold yet.
type servedZone struct {
	conf *zoneConf
	name string
	snap *store.Snapshot
}

func newSettings(cfg *schema.Config) *settings {
	st := &settings{
		cfg:       cfg,
		forward:   map[string]*zoneConf{},
		rname:     hostmasterName(cfg.Hostmaster),
		recordTTL: seconds(cfg.TTL.Record),
		nsTTL:     seconds(cfg.TTL.NS),
		refresh:   seconds(cfg.TTL.SOARefresh),
		retry:     seconds(cfg.TTL.SOARetry),
		expire:    seconds(cfg.TTL.SOAExpire),
		minimum:   seconds(cfg.TTL.SOAMinimum),
		answers:   newAnswerCache(),
	}
	st.mname = dns.Fqdn(strings.ToLower(cfg.MyName))
	for _, z := range cfg.ForwardZones {
		name := dns.Fqdn(strings.ToLower(z.Name))
		st.forward[name] = st.zoneConf(name, forwardZone, z.ZoneAccess)
	}
	st.reverse = st.zoneConf("", reverseZone, cfg.ReverseZones)
	if cat, ok := catalogConfig(cfg); ok {
		st.catalog = cat
		st.catalog.ns = []string{"invalid."}
	}
	return st
}

// zoneConf derives a zone's NS set and SOA MNAME from its access
// settings: the secondaries given by name, plus this server unless it is
// a hidden primary. MNAME is my_name, or for a hidden primary the first
// secondary given by name. Secondaries given as addresses cannot be NS
// targets and are left out, and so are ports: NS records have none. When
// nothing is left, my_name stands in.
func (st *settings) zoneConf(name string, kind zoneKind, access schema.ZoneAccess) *zoneConf {
	zc := &zoneConf{name: name, kind: kind, access: access, mname: st.mname}
	var named []string
	for _, p := range access.Peers {
		host, _, err := schema.SplitPeer(p)
		if err != nil {
			continue // the schema has rejected it already
		}
		if _, err := netip.ParseAddr(host); err == nil {
			continue
		}
		named = append(named, dns.Fqdn(strings.ToLower(host)))
	}
	if access.HiddenPrimary && len(named) > 0 {
		zc.mname = named[0]
	} else {
		zc.ns = append(zc.ns, st.mname)
	}
	for _, n := range named {
		if !slices.Contains(zc.ns, n) {
			zc.ns = append(zc.ns, n)
		}
	}
	return zc
}

// find returns the zone qname falls in: the longest configured forward
// zone, catalog zone or reverse zone the store holds that is qname or one
// of its ancestors, matched by whole labels. ok is false outside every
// zone.
func (st *settings) find(src Source, qname string) (z servedZone, ok bool) {
	return st.findLower(src, strings.ToLower(dns.Fqdn(qname)))
}

// findLower is find for a name already absolute and lower-case, as the
// answer cache keeps them: it saves a pass over the name per query.
func (st *settings) findLower(src Source, qname string) (z servedZone, ok bool) {
	for off, end := 0, false; !end; off, end = dns.NextLabel(qname, off) {
		name := qname[off:]
		if zc := st.forward[name]; zc != nil {
			return servedZone{conf: zc, name: name, snap: src.Snapshot(name)}, true
		}
		if st.catalog != nil && st.catalog.name == name {
			return servedZone{conf: st.catalog, name: name, snap: src.Snapshot(name)}, true
		}
		if isReverse(name) {
			if snap := src.Snapshot(name); snap != nil {
				return servedZone{conf: st.reverse, name: name, snap: snap}, true
			}
		}
	}
	return servedZone{}, false
}

// zone returns the zone called name (absolute, lower-case) if it is
// served, with its current snapshot.
func (st *settings) zone(src Source, name string) (servedZone, bool) {
	z, ok := st.find(src, name)
	if !ok || z.name != name {
		return servedZone{}, false
	}
	return z, true
}

// served lists every zone served now: the configured forward zones, the
// catalog zone and the reverse zones the store holds, sorted by name.
func (st *settings) served(src Source) []servedZone {
	var out []servedZone
	for name, zc := range st.forward {
		out = append(out, servedZone{conf: zc, name: name, snap: src.Snapshot(name)})
	}
	if st.catalog != nil {
		out = append(out, servedZone{conf: st.catalog, name: st.catalog.name, snap: src.Snapshot(st.catalog.name)})
	}
	for _, name := range src.Zones() {
		if isReverse(name) {
			if snap := src.Snapshot(name); snap != nil {
				out = append(out, servedZone{conf: st.reverse, name: name, snap: snap})
			}
		}
	}
	slices.SortFunc(out, func(a, b servedZone) int { return strings.Compare(a.name, b.name) })
	return out
}

// transferPeers lists the access settings whose secondaries may
// transfer z: its own, and for the catalog zone every zone's, since a
// secondary of any zone may follow the catalog.
func (st *settings) transferPeers(z servedZone) []schema.ZoneAccess {
	if z.conf.kind != catalogZone {
		return []schema.ZoneAccess{z.conf.access}
	}
	out := []schema.ZoneAccess{z.conf.access, st.reverse.access}
	for _, zc := range st.forward {
		out = append(out, zc.access)
	}
	return out
}

// isReverse reports whether name is under in-addr.arpa. or ip6.arpa.
func isReverse(name string) bool {
	return strings.HasSuffix(name, ".in-addr.arpa.") || strings.HasSuffix(name, ".ip6.arpa.")
}

// soa returns the zone's SOA record at serial.
func (st *settings) soa(z servedZone, serial uint32) *dns.SOA {
	return &dns.SOA{
		Hdr:     dns.RR_Header{Name: z.name, Rrtype: dns.TypeSOA, Class: dns.ClassINET, Ttl: st.nsTTL},
		Ns:      z.conf.mname,
		Mbox:    st.rname,
		Serial:  serial,
		Refresh: st.refresh,
		Retry:   st.retry,
		Expire:  st.expire,
		Minttl:  st.minimum,
	}
}

// negativeSOA is the SOA of a negative answer: its TTL is the lesser of
// the SOA's TTL and MINIMUM (RFC 2308 §3).
func (st *settings) negativeSOA(z servedZone, serial uint32) *dns.SOA {
	soa := st.soa(z, serial)
	soa.Hdr.Ttl = min(soa.Hdr.Ttl, soa.Minttl)
	return soa
}

// ttl is the TTL a stored record is served with: NS records (which the
// catalog maintainer stores at the apex of forward zones) get the NS TTL.
func (st *settings) ttl(r store.Record) uint32 {
	if uint16(r.Type) == dns.TypeNS {
		return st.nsTTL
	}
	return st.recordTTL
}

// storedNS reports whether the store holds the zone's NS records, which
// then replace the ones built from the configuration: stored, they change
// with a serial and reach secondaries by IXFR.
func (z servedZone) storedNS() bool {
	for _, r := range z.snap.Lookup(z.name) {
		if uint16(r.Type) == dns.TypeNS {
			return true
		}
	}
	return false
}

// nsRecords returns the zone's NS records as the configuration gives
// them: for zones that do not store their own (reverse zones).
func (st *settings) nsRecords(z servedZone) []dns.RR {
	out := make([]dns.RR, 0, len(z.conf.ns))
	for _, ns := range z.conf.ns {
		out = append(out, &dns.NS{Hdr: dns.RR_Header{Name: z.name, Rrtype: dns.TypeNS, Class: dns.ClassINET, Ttl: st.nsTTL}, Ns: ns})
	}
	return out
}

// serial returns the zone's current serial; 0 when the store does not
// hold it yet.
func (z servedZone) serial() uint32 {
	if z.snap == nil {
		return 0
	}
	return uint32(z.snap.Serial())
}

// hostmasterName turns user@domain into the SOA RNAME user.domain., with
// dots in user escaped (RFC 1035 §8).
func hostmasterName(hm string) string {
	user, domain, ok := strings.Cut(hm, "@")
	if !ok {
		return dns.Fqdn(strings.ToLower(hm))
	}
	return strings.ReplaceAll(user, ".", `\.`) + "." + dns.Fqdn(strings.ToLower(domain))
}

func seconds(d interface{ Seconds() float64 }) uint32 {
	s := d.Seconds()
	if s < 0 {
		return 0
	}
	if s > float64(^uint32(0)>>1) {
		return ^uint32(0) >> 1
	}
	return uint32(s)
}
