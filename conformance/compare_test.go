package conformance

import (
	"encoding/binary"
	"fmt"
	"slices"
	"strings"

	"github.com/miekg/dns"
)

// fields is what the test compares of one server's answer to one query:
// field name → value. "reply" is "none" when the server did not answer
// (and nothing else is set), "unparsable" when the answer does not parse
// (then only the header is set).
type fields map[string]string

// fieldOrder is the order differences are reported in.
var fieldOrder = []string{"reply", "id", "qr", "opcode", "rcode", "aa", "tc", "rd", "ra", "z", "ad", "cd",
	"question", "answer", "answer.owner-case", "answer.rdata-case", "authority", "authority.owner-case",
	"authority.rdata-case", "additional", "additional.owner-case", "additional.rdata-case",
	"edns", "edns.version", "edns.do", "edns.flags", "edns.size", "edns.options", "edns.ede", "tsig"}

// summarize takes an answer apart into fields. id is the query's ID.
func summarize(raw []byte, id uint16) fields {
	if raw == nil {
		return fields{"reply": "none"}
	}
	f := fields{"reply": "answer"}
	m := new(dns.Msg)
	if err := m.Unpack(raw); err != nil {
		f["reply"] = "unparsable"
		if len(raw) >= 4 {
			f["id"] = yesNo(binary.BigEndian.Uint16(raw) == id, "echoed", "other")
			f["rcode"] = dns.RcodeToString[int(raw[3]&0xf)]
		}
		return f
	}
	f["id"] = yesNo(m.Id == id, "echoed", "other")
	f["opcode"] = opcodeName(m.Opcode)
	for _, b := range []struct {
		name string
		on   bool
	}{{"qr", m.Response}, {"aa", m.Authoritative}, {"tc", m.Truncated}, {"rd", m.RecursionDesired},
		{"ra", m.RecursionAvailable}, {"z", m.Zero}, {"ad", m.AuthenticatedData}, {"cd", m.CheckingDisabled}} {
		f[b.name] = yesNo(b.on, "1", "0")
	}
	var qs []string
	for _, q := range m.Question {
		qs = append(qs, fmt.Sprintf("%s %s %s", q.Name, className(q.Qclass), typeName(q.Qtype)))
	}
	f["question"] = strings.Join(qs, " | ")
	section(f, "answer", m.Answer)
	section(f, "authority", m.Ns)
	var extra, opts, tsigs []dns.RR
	for _, rr := range m.Extra {
		switch rr.Header().Rrtype {
		case dns.TypeOPT:
			opts = append(opts, rr)
		case dns.TypeTSIG:
			tsigs = append(tsigs, rr)
		default:
			extra = append(extra, rr)
		}
	}
	section(f, "additional", extra)
	rcode := m.Rcode // with the OPT's extended rcode folded in by Unpack
	f["edns"] = "none"
	if len(opts) > 0 {
		o := opts[0].(*dns.OPT)
		f["edns"] = fmt.Sprintf("%d OPT owned by %s", len(opts), o.Hdr.Name)
		f["edns.version"] = fmt.Sprint(o.Version())
		f["edns.do"] = yesNo(o.Do(), "1", "0")
		f["edns.flags"] = fmt.Sprintf("%#04x", o.Hdr.Ttl&0x7fff)
		f["edns.size"] = fmt.Sprint(o.UDPSize())
		f["edns.options"], f["edns.ede"] = options(o)
	}
	f["rcode"] = rcodeName(rcode)
	f["tsig"] = "none"
	if len(tsigs) > 0 {
		ts := tsigs[0].(*dns.TSIG)
		f["tsig"] = fmt.Sprintf("%d TSIG, error %s, MAC %d octets", len(tsigs), rcodeName(int(ts.Error)), ts.MACSize)
	}
	return f
}

// section sets three fields of a section: its records as a set, names
// lower-cased (name); the owner names as the server spelt them
// (name.owner-case); and the records as the server spelt every name
// (name.rdata-case). The case of names is a field of its own because
// Knot and NSD, compressing names, spell a name that ends in the
// question's name or its zone as the question does, wherever it is.
func section(f fields, name string, rrs []dns.RR) {
	var folded, owners, exact []string
	for _, rr := range rrs {
		line := strings.ReplaceAll(rr.String(), "\t", " ")
		exact = append(exact, line)
		folded = append(folded, strings.ToLower(line))
		owners = append(owners, rr.Header().Name)
	}
	// Sets: Knot repeats the address of an SRV target named twice.
	f[name] = strings.Join(slices.Compact(slices.Sorted(slices.Values(folded))), "\n")
	f[name+".owner-case"] = strings.Join(slices.Compact(slices.Sorted(slices.Values(owners))), " ")
	f[name+".rdata-case"] = strings.Join(slices.Compact(slices.Sorted(slices.Values(exact))), "\n")
}

// options lists an OPT's options by code, with their data; a cookie is
// its client part and the length of the server's (which is random).
// Extended DNS Errors (RFC 8914) are listed apart, in ede.
func options(o *dns.OPT) (opts, ede string) {
	var out, edes []string
	for _, opt := range o.Option {
		switch opt := opt.(type) {
		case *dns.EDNS0_EDE:
			edes = append(edes, fmt.Sprintf("%d %q", opt.InfoCode, opt.ExtraText))
		case *dns.EDNS0_COOKIE:
			c := opt.Cookie
			out = append(out, fmt.Sprintf("COOKIE client %s server %d octets", c[:min(len(c), 16)], max(len(c)-16, 0)/2))
		default:
			out = append(out, fmt.Sprintf("%d:%s", opt.Option(), opt.String()))
		}
	}
	slices.Sort(out)
	slices.Sort(edes)
	return strings.Join(out, " "), strings.Join(edes, " ")
}

func yesNo(b bool, yes, no string) string {
	if b {
		return yes
	}
	return no
}

func rcodeName(r int) string {
	if s, ok := dns.RcodeToString[r]; ok {
		return s
	}
	return fmt.Sprintf("RCODE%d", r)
}

func opcodeName(o int) string {
	if s, ok := dns.OpcodeToString[o]; ok {
		return s
	}
	return fmt.Sprintf("OPCODE%d", o)
}

// difference is one field of one answer in which cnsd agrees with
// neither Knot nor NSD.
type difference struct {
	q               query
	field           string
	cnsd, knot, nsd string
	// all are the three answers' fields, cnsd's first.
	all [3]fields
}

// key is what allowed differences match: variant, kind of
// name, type, transport and field.
func (d difference) key() string {
	return strings.Join([]string{d.q.variant, d.q.kind, d.q.qtype, d.q.transport(), d.field}, " ")
}

// compare lists the fields of cnsd's answer that are in neither Knot's
// nor NSD's. A field absent from an answer compares as "".
func compare(q query, cnsd, knot, nsd fields) []difference {
	var out []difference
	differ := map[string]bool{}
	order := fieldOrder
	if knot["reply"] == "none" && nsd["reply"] == "none" {
		order = []string{"reply"} // the rest of cnsd's answer differs with it
	}
	for _, name := range order {
		c := cnsd[name]
		if c == knot[name] || c == nsd[name] {
			continue
		}
		differ[name] = true
		// The case of records that differ anyway is not a difference
		// of its own.
		if sec, _, ok := strings.Cut(name, "."); ok && differ[sec] {
			continue
		}
		field := name
		if sec, _, _ := strings.Cut(name, "."); slices.Contains([]string{"answer", "authority", "additional"}, sec) &&
			(cnsd["tc"] == "1" || knot["tc"] == "1" || nsd["tc"] == "1") {
			field += "-tc" // a section of a truncated answer
		}
		out = append(out, difference{q: q, field: field, cnsd: c, knot: knot[name], nsd: nsd[name], all: [3]fields{cnsd, knot, nsd}})
	}
	return out
}
