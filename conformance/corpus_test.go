package conformance

import (
	"encoding/binary"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"time"

	"github.com/miekg/dns"

	"github.com/cnsd/cnsd/store"
)

// query is one request of the corpus, sent as is to every server.
type query struct {
	// variant says what sets the query apart from an ordinary one
	// ("plain", "opcode=IQUERY", "edns=two-opt", …), kind what its name
	// is (existing, apex, missing, …) and qtype what it asks for: with
	// the transport they make the key differences are grouped and
	// allowed by.
	variant, kind, qtype string
	tcp                  bool
	pkt                  []byte
	desc                 string // the request in one line, for examples
}

func (q query) transport() string {
	if q.tcp {
		return "tcp"
	}
	return "udp"
}

// names are the corpus's names by kind.
type names map[string][]string

// collectNames sorts every name of interest in zones by kind: existing
// owners in forward zones, in reverse zones and with a CNAME, apexes,
// empty non-terminals, names that do not exist (in a zone and below an
// existing leaf), names outside every zone, and "big" ones (a name with
// three records or more of one type, given as name/TYPE).
func collectNames(zones map[string][]store.Record) names {
	n := names{}
	owners := map[string]bool{}
	count := map[string]int{}
	for zone, recs := range zones {
		n["apex"] = append(n["apex"], zone)
		for _, r := range recs {
			owners[dns.CanonicalName(r.Name)] = true
			count[dns.CanonicalName(r.Name)+"/"+dns.TypeToString[uint16(r.Type)]]++
		}
	}
	for zone, recs := range zones {
		seen := map[string]bool{}
		for _, r := range recs {
			name := dns.CanonicalName(r.Name)
			if seen[name+dns.TypeToString[uint16(r.Type)]] || name == zone {
				continue
			}
			seen[name+dns.TypeToString[uint16(r.Type)]] = true
			switch {
			case uint16(r.Type) == dns.TypeCNAME:
				n["cname"] = append(n["cname"], name)
			case isReverse(zone):
				n["reverse"] = append(n["reverse"], name)
			default:
				n["existing"] = append(n["existing"], name)
			}
			n["missing"] = append(n["missing"], "nope."+name)
			for a := parent(name); a != zone && a != ""; a = parent(a) {
				if !owners[a] && !seen["ent "+a] {
					seen["ent "+a] = true
					n["ent"] = append(n["ent"], a)
				}
			}
		}
		for i := range 3 {
			n["missing"] = append(n["missing"], fmt.Sprintf("nx%d.%s", i, zone))
		}
		n["missing"] = append(n["missing"], "*."+zone)
	}
	for k, c := range count {
		if c >= 3 {
			n["big"] = append(n["big"], k)
		}
	}
	n["outside"] = []string{".", "arpa.", "in-addr.arpa.", "example.test.", "cns.example.test.", "example.org.",
		"xdc1.cns.example.test.", "113.0.203.in-addr.arpa.example.", "0.113.0.203.in-addr.arpa."}
	for k := range n {
		slices.Sort(n[k])
		n[k] = slices.Compact(n[k])
	}
	return n
}

func parent(name string) string {
	_, rest, ok := strings.Cut(name, ".")
	if !ok || rest == "" {
		return ""
	}
	return rest
}

func isReverse(zone string) bool {
	return strings.HasSuffix(zone, ".in-addr.arpa.") || strings.HasSuffix(zone, ".ip6.arpa.")
}

// kindWeights is how often each kind of name is asked for.
var kindWeights = []struct {
	kind   string
	weight int
}{{"existing", 30}, {"apex", 14}, {"missing", 14}, {"ent", 10}, {"cname", 8}, {"reverse", 10}, {"outside", 6}, {"big", 8}}

// qtypes are the types asked for: the common ones, some nobody
// publishes here, and an unassigned one.
var qtypes = []uint16{dns.TypeA, dns.TypeAAAA, dns.TypeNS, dns.TypeSOA, dns.TypePTR, dns.TypeSRV, dns.TypeTXT,
	dns.TypeCNAME, dns.TypeMX, dns.TypeANY, dns.TypeDS, dns.TypeDNSKEY, dns.TypeCAA, dns.TypeHINFO, dns.TypeNSEC,
	dns.TypeRRSIG, dns.TypeNAPTR, dns.TypeTLSA, dns.TypeHTTPS, dns.TypeSVCB, dns.TypeDNAME, dns.TypeSPF, 65280}

// generator builds the corpus from one seed.
type generator struct {
	rng   *rand.Rand
	names names
	id    uint16
}

// corpus returns the queries: every variant over UDP and over TCP
// perVariant times, then plain queries up to total.
func corpus(seed uint64, zones map[string][]store.Record, perVariant, total int) []query {
	g := &generator{rng: rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15)), names: collectNames(zones)}
	var out []query
	for range perVariant {
		for _, v := range variants {
			for _, tcp := range []bool{false, true} {
				if (v.udpOnly && tcp) || (v.tcpOnly && !tcp) {
					continue
				}
				out = append(out, g.query(v, tcp))
			}
		}
	}
	for len(out) < total {
		out = append(out, g.query(variants[0], g.rng.IntN(4) == 0))
	}
	return out
}

// build is a query being made: the message, and what is done to its
// wire form after packing.
type build struct {
	g      *generator
	m      *dns.Msg
	opt    *dns.OPT // the OPT record to add last; nil for none
	extra  []dns.RR // added after opt
	tsig   bool
	mutate func(pkt []byte) []byte
	raw    []byte // sent instead of the packed message
	kind   string
	qtype  uint16
}

// variant is one way a query differs from an ordinary one.
type variant struct {
	name             string
	apply            func(b *build)
	udpOnly, tcpOnly bool
}

func (g *generator) query(v variant, tcp bool) query {
	b := g.base()
	v.apply(b)
	pkt := b.raw
	if pkt == nil {
		pkt = b.pack()
	}
	q := query{variant: v.name, kind: b.kind, qtype: typeName(b.qtype), tcp: tcp, pkt: pkt}
	q.desc = fmt.Sprintf("%s %s %s", q.transport(), v.name, describe(pkt))
	return q
}

// base is an ordinary query: a name of a random kind in random case
// (now and then), a type it has or a random one, no RD, EDNS0 with 1232
// octets three times in five.
func (g *generator) base() *build {
	g.id++
	b := &build{g: g, m: new(dns.Msg)}
	b.kind = g.kind()
	name := g.pick(b.kind)
	b.qtype = qtypes[g.rng.IntN(len(qtypes))]
	if b.kind == "big" {
		n, t, _ := strings.Cut(name, "/")
		name, b.qtype = n, dns.StringToType[t]
	}
	if g.rng.IntN(10) < 3 {
		name = mixCase(g.rng, name)
	}
	b.m.Id = g.id
	b.m.Question = []dns.Question{{Name: name, Qtype: b.qtype, Qclass: dns.ClassINET}}
	if g.rng.IntN(5) < 3 {
		b.opt = newOPT(1232)
	}
	return b
}

func (g *generator) kind() string {
	total := 0
	for _, k := range kindWeights {
		total += k.weight
	}
	n := g.rng.IntN(total)
	for _, k := range kindWeights {
		if n < k.weight {
			return k.kind
		}
		n -= k.weight
	}
	panic("unreachable")
}

func (g *generator) pick(kind string) string {
	pool := g.names[kind]
	return pool[g.rng.IntN(len(pool))]
}

// mixCase changes the case of each letter of name with even odds.
func mixCase(rng *rand.Rand, name string) string {
	b := []byte(name)
	for i, c := range b {
		if c >= 'a' && c <= 'z' && rng.IntN(2) == 0 {
			b[i] = c - 'a' + 'A'
		}
	}
	return string(b)
}

func newOPT(size uint16) *dns.OPT {
	o := &dns.OPT{Hdr: dns.RR_Header{Name: ".", Rrtype: dns.TypeOPT}}
	o.SetUDPSize(size)
	return o
}

// pack is the wire form of the query, TSIG-signed with a key no server
// knows when asked for.
func (b *build) pack() []byte {
	if b.opt != nil {
		b.m.Extra = append(b.m.Extra, b.opt)
	}
	b.m.Extra = append(b.m.Extra, b.extra...)
	var pkt []byte
	var err error
	if b.tsig {
		b.m.SetTsig("unknown-key.example.", dns.HmacSHA256, 300, time.Now().Unix())
		pkt, _, err = dns.TsigGenerate(b.m, "c2VjcmV0LXNlY3JldC1zZWNyZXQ=", "", false)
	} else {
		pkt, err = b.m.Pack()
	}
	if err != nil {
		panic(fmt.Sprintf("pack %v: %v", b.m, err))
	}
	if b.mutate != nil {
		pkt = b.mutate(pkt)
	}
	return pkt
}

// describe is a request in one line: its header and question, or its
// length and first octets when it does not parse.
func describe(pkt []byte) string {
	m := new(dns.Msg)
	if err := m.Unpack(pkt); err != nil || len(m.Question) == 0 {
		return fmt.Sprintf("%d octets %x…", len(pkt), pkt[:min(len(pkt), 24)])
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%s %s %s %s", dns.OpcodeToString[m.Opcode], m.Question[0].Name,
		className(m.Question[0].Qclass), typeName(m.Question[0].Qtype))
	for _, f := range []struct {
		on   bool
		name string
	}{{m.RecursionDesired, "rd"}, {m.CheckingDisabled, "cd"}, {m.AuthenticatedData, "ad"},
		{m.Truncated, "tc"}, {m.Response, "qr"}, {m.Zero, "z"}, {m.RecursionAvailable, "ra"}, {m.Authoritative, "aa"}} {
		if f.on {
			b.WriteString(" " + f.name)
		}
	}
	if o := m.IsEdns0(); o != nil {
		fmt.Fprintf(&b, " edns(v%d size=%d do=%v)", o.Version(), o.UDPSize(), o.Do())
	}
	return b.String()
}

func typeName(t uint16) string {
	if s, ok := dns.TypeToString[t]; ok {
		return s
	}
	return fmt.Sprintf("TYPE%d", t)
}

func className(c uint16) string {
	if s, ok := dns.ClassToString[c]; ok {
		return s
	}
	return fmt.Sprintf("CLASS%d", c)
}

// setCount overwrites one of the header's four counts (0: QDCOUNT … 3:
// ARCOUNT).
func setCount(i int, v uint16) func([]byte) []byte {
	return func(p []byte) []byte {
		binary.BigEndian.PutUint16(p[4+2*i:], v)
		return p
	}
}
