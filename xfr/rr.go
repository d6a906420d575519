package xfr

import (
	"fmt"
	"net"
	"strconv"
	"strings"

	"github.com/miekg/dns"

	"github.com/cnsd/cnsd/store"
)

// toRR turns a stored record (presentation RDATA) into a wire record
// with the given TTL. The types zonegen emits are converted directly,
// since AXFR converts every record of a zone; anything else goes through
// the zone-file parser.
func toRR(r store.Record, ttl uint32) (dns.RR, error) {
	hdr := dns.RR_Header{Name: r.Name, Rrtype: uint16(r.Type), Class: dns.ClassINET, Ttl: ttl}
	switch uint16(r.Type) {
	case dns.TypeA:
		ip := net.ParseIP(r.Data).To4()
		if ip == nil {
			return nil, badRecord(r, "not an IPv4 address")
		}
		return &dns.A{Hdr: hdr, A: ip}, nil
	case dns.TypeAAAA:
		ip := net.ParseIP(r.Data)
		if ip == nil || ip.To4() != nil {
			return nil, badRecord(r, "not an IPv6 address")
		}
		return &dns.AAAA{Hdr: hdr, AAAA: ip}, nil
	case dns.TypePTR:
		if _, ok := dns.IsDomainName(r.Data); !ok || !dns.IsFqdn(r.Data) {
			return nil, badRecord(r, "not an absolute domain name")
		}
		return &dns.PTR{Hdr: hdr, Ptr: r.Data}, nil
	case dns.TypeNS:
		if _, ok := dns.IsDomainName(r.Data); !ok || !dns.IsFqdn(r.Data) {
			return nil, badRecord(r, "not an absolute domain name")
		}
		return &dns.NS{Hdr: hdr, Ns: r.Data}, nil
	case dns.TypeCNAME:
		if _, ok := dns.IsDomainName(r.Data); !ok || !dns.IsFqdn(r.Data) {
			return nil, badRecord(r, "not an absolute domain name")
		}
		return &dns.CNAME{Hdr: hdr, Target: r.Data}, nil
	case dns.TypeSRV:
		return srvRR(hdr, r)
	case dns.TypeTXT:
		txt, err := parseTXT(r.Data)
		if err != nil {
			return nil, badRecord(r, err.Error())
		}
		return &dns.TXT{Hdr: hdr, Txt: txt}, nil
	}
	rr, err := dns.NewRR(fmt.Sprintf("%s %d IN %s %s", r.Name, ttl, dns.Type(r.Type), r.Data))
	if err != nil || rr == nil {
		return nil, badRecord(r, fmt.Sprint(err))
	}
	return rr, nil
}

func badRecord(r store.Record, why string) error {
	return fmt.Errorf("%w %s %s %q of %s: %s", errBadRecord, r.Name, dns.Type(r.Type), r.Data, r.Source, why)
}

// srvRR parses "priority weight port target".
func srvRR(hdr dns.RR_Header, r store.Record) (dns.RR, error) {
	f := strings.Fields(r.Data)
	if len(f) != 4 {
		return nil, badRecord(r, "want priority weight port target")
	}
	var v [3]uint16
	for i := range v {
		n, err := strconv.ParseUint(f[i], 10, 16)
		if err != nil {
			return nil, badRecord(r, "bad number "+f[i])
		}
		v[i] = uint16(n)
	}
	if _, ok := dns.IsDomainName(f[3]); !ok || !dns.IsFqdn(f[3]) {
		return nil, badRecord(r, "target is not an absolute domain name")
	}
	return &dns.SRV{Hdr: hdr, Priority: v[0], Weight: v[1], Port: v[2], Target: f[3]}, nil
}

// parseTXT splits TXT presentation data — quoted character-strings
// separated by spaces, with \" \\ and \DDD escapes — into the strings
// miekg/dns keeps, which are in its own escaped form: it re-escapes them
// when packing. The quoting is the zone-file form zonegen writes.
func parseTXT(s string) ([]string, error) {
	var out []string
	for i := 0; i < len(s); {
		if s[i] == ' ' {
			i++
			continue
		}
		if s[i] != '"' {
			return nil, fmt.Errorf("character-string at offset %d does not start with a quote", i)
		}
		j := i + 1
		for ; j < len(s) && s[j] != '"'; j++ {
			if s[j] == '\\' {
				j++
			}
		}
		if j >= len(s) {
			return nil, fmt.Errorf("character-string at offset %d has no closing quote", i)
		}
		out = append(out, s[i+1:j])
		i = j + 1
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("no character-string")
	}
	return out, nil
}
