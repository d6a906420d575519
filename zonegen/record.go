package zonegen

import (
	"cmp"
	"strconv"
	"strings"
)

// Type is a DNS record type code (RFC 1035 numbering).
type Type uint16

// The record types zonegen produces.
const (
	TypeA     Type = 1
	TypeCNAME Type = 5
	TypePTR   Type = 12
	TypeTXT   Type = 16
	TypeAAAA  Type = 28
	TypeSRV   Type = 33
)

var typeNames = map[Type]string{
	TypeA: "A", TypeCNAME: "CNAME", TypePTR: "PTR", TypeTXT: "TXT", TypeAAAA: "AAAA", TypeSRV: "SRV",
}

func (t Type) String() string {
	if s, ok := typeNames[t]; ok {
		return s
	}
	return "TYPE" + strconv.Itoa(int(t))
}

// Record is one DNS record a VM contributes. Name is absolute, lower-case,
// with the trailing dot; Data is the zone-file presentation of the RDATA
// (quoted strings for TXT, "priority weight port target" for SRV).
// Source is the UUID of the VM that produced it: a name owned by several
// VMs holds the union of their records.
type Record struct {
	Name   string `json:"name"`
	Type   Type   `json:"type"`
	Data   string `json:"data"`
	Source string `json:"source"`
}

func (r Record) String() string {
	return r.Name + "\t" + r.Type.String() + "\t" + r.Data
}

// Compare orders records by name, type, data and source.
func (r Record) Compare(o Record) int {
	if c := r.CompareRR(o); c != 0 {
		return c
	}
	return strings.Compare(r.Source, o.Source)
}

// CompareRR orders records by name, type and data, ignoring the source:
// records it finds equal are one record on the wire.
func (r Record) CompareRR(o Record) int {
	if c := strings.Compare(r.Name, o.Name); c != 0 {
		return c
	}
	if c := cmp.Compare(r.Type, o.Type); c != 0 {
		return c
	}
	return strings.Compare(r.Data, o.Data)
}

// ZoneRecords are the records one VM contributes to one zone, sorted and
// without duplicates.
type ZoneRecords struct {
	Zone    string   `json:"zone"`
	Records []Record `json:"records"`
}

// Contribution is everything one VM contributes, per zone (sorted by zone
// name), plus notes on names and addresses that were skipped.
type Contribution struct {
	VM string `json:"vm"`
	// Unresolved mirrors Decision.Unresolved: the caller must keep the
	// VM's previous contribution instead of this empty one.
	Unresolved bool          `json:"unresolved,omitempty"`
	Zones      []ZoneRecords `json:"zones,omitempty"`
	Notes      []Reason      `json:"notes,omitempty"`
}

// Records returns the contribution's records for zone, or nil.
func (c *Contribution) Records(zone string) []Record {
	for _, z := range c.Zones {
		if z.Zone == zone {
			return z.Records
		}
	}
	return nil
}

// QuoteTXT renders s as TXT RDATA: quoted character-strings of at most
// 255 octets each, with '"', '\\' and non-printable octets escaped.
func QuoteTXT(s string) string {
	return string(appendQuoteTXT(make([]byte, 0, len(s)+2), s))
}

func appendQuoteTXT(dst []byte, s string) []byte {
	for first := true; first || s != ""; first = false {
		chunk := s
		if len(chunk) > 255 {
			chunk = chunk[:255]
		}
		s = s[len(chunk):]
		if !first {
			dst = append(dst, ' ')
		}
		dst = append(dst, '"')
		for i := 0; i < len(chunk); i++ {
			switch c := chunk[i]; {
			case c == '"' || c == '\\':
				dst = append(dst, '\\', c)
			case c < 0x20 || c > 0x7e:
				dst = append(dst, '\\', '0'+c/100, '0'+c/10%10, '0'+c%10)
			default:
				dst = append(dst, c)
			}
		}
		dst = append(dst, '"')
	}
	return dst
}
