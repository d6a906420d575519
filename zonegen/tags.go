package zonegen

import (
	"strconv"
	"strings"
)

// Tag and metadata keys read from VMs. The services, disable and
// reverse_ptr tags are also read with the "docker:label:" prefix.
const (
	TagServices      = "triton.cns.services"
	TagDisable       = "triton.cns.disable"
	TagReversePTR    = "triton.cns.reverse_ptr"
	MetaStatus       = "triton.cns.status"
	MetaACME         = "triton.cns.acme-challenge"
	DockerLabel      = "docker:label:"
	tagSmartDCRole   = "smartdc_role"
	tagMantaRole     = "manta_role"
	defaultSRVWeight = 10
)

// Service is one service a VM is a member of, with the SRV ports it
// declared (none means no SRV record).
type Service struct {
	Name  string
	Ports []Port
}

// Port is one SRV record's port, priority and weight.
type Port struct {
	Port     uint16
	Priority uint16
	Weight   uint16
}

// TagError says why a triton.cns.services tag was rejected.
type TagError struct {
	Tag    string // the whole tag value
	Offset int    // byte offset of the problem in Tag
	Msg    string
}

func (e *TagError) Error() string {
	return "invalid " + TagServices + " tag " + strconv.Quote(e.Tag) +
		": at offset " + strconv.Itoa(e.Offset) + ": " + e.Msg
}

// ParseServices parses a triton.cns.services tag:
//
//	tag     := service ("," service)*
//	service := label (":" port)? (":" key "=" value)*
//	label   := [a-z0-9-][a-z0-9-.]* | "_" [a-z0-9-]* ("._tcp" | "._udp")
//	key     := "port" | "priority" | "weight"
//
// Labels are lower-cased and at most 63 octets; ports are 1–65535,
// priorities and weights 0–65535 (defaults 0 and 10); a later key of the
// same name wins. Services named twice are merged, keeping one SRV port per
// distinct (port, priority, weight).
func ParseServices(tag string) ([]Service, error) {
	p := tagParser{tag: tag}
	var out []Service
	for {
		name, port, ok := p.service()
		if !ok {
			return nil, p.err
		}
		out = mergeService(out, name, port)
		if p.pos == len(tag) {
			return out, nil
		}
		if tag[p.pos] != ',' {
			p.fail(`expected "," or end of tag`)
			return nil, p.err
		}
		p.pos++
	}
}

func mergeService(svcs []Service, name string, port *Port) []Service {
	i := 0
	for i < len(svcs) && svcs[i].Name != name {
		i++
	}
	if i == len(svcs) {
		svcs = append(svcs, Service{Name: name})
	}
	if port == nil {
		return svcs
	}
	for _, q := range svcs[i].Ports {
		if q == *port {
			return svcs
		}
	}
	svcs[i].Ports = append(svcs[i].Ports, *port)
	return svcs
}

type tagParser struct {
	tag string
	pos int
	err *TagError
}

// fail records the error at the current position and returns false so
// callers can write "return x, p.fail(...)".
func (p *tagParser) fail(msg string) bool {
	p.err = &TagError{Tag: p.tag, Offset: p.pos, Msg: msg}
	return false
}

func (p *tagParser) peek() byte {
	if p.pos < len(p.tag) {
		return p.tag[p.pos]
	}
	return 0
}

// service parses one service entry; port is nil when none was given.
func (p *tagParser) service() (name string, port *Port, ok bool) {
	name, ok = p.label()
	if !ok {
		return "", nil, false
	}
	var pt Port
	pt.Weight = defaultSRVWeight
	hasPort := false
	if p.peek() == ':' && p.pos+1 < len(p.tag) && isDigit(p.tag[p.pos+1]) {
		p.pos++
		start := p.pos
		for isDigit(p.peek()) {
			p.pos++
		}
		digits := p.tag[start:p.pos]
		v, good := parseUint16(digits, 1)
		if !good {
			p.pos = start
			return "", nil, p.fail("port " + strconv.Quote(digits) + " of " + strconv.Quote(name) + " must be within 1-65535")
		}
		pt.Port, hasPort = v, true
	}
	for p.peek() == ':' {
		p.pos++
		if !p.property(name, &pt, &hasPort) {
			return "", nil, false
		}
	}
	if hasPort {
		return name, &pt, true
	}
	return name, nil, true
}

func (p *tagParser) property(svc string, pt *Port, hasPort *bool) bool {
	start := p.pos
	for p.pos < len(p.tag) && p.tag[p.pos] != '=' && p.tag[p.pos] != ',' && p.tag[p.pos] != ':' {
		p.pos++
	}
	key := p.tag[start:p.pos]
	if p.peek() != '=' {
		p.pos = start
		return p.fail(`expected "key=value" after ":" in service ` + strconv.Quote(svc))
	}
	p.pos++
	vstart := p.pos
	for p.pos < len(p.tag) && p.tag[p.pos] != ',' && p.tag[p.pos] != ':' {
		p.pos++
	}
	val := p.tag[vstart:p.pos]
	lowest := uint64(0)
	switch key {
	case "port":
		lowest = 1
	case "priority", "weight":
	default:
		p.pos = start
		return p.fail("unknown property " + strconv.Quote(key) + " in service " + strconv.Quote(svc) + " (want port, priority or weight)")
	}
	v, good := parseUint16(val, lowest)
	if !good {
		p.pos = vstart
		return p.fail(key + " " + strconv.Quote(val) + " of " + strconv.Quote(svc) + " must be within " + strconv.FormatUint(lowest, 10) + "-65535")
	}
	switch key {
	case "port":
		pt.Port, *hasPort = v, true
	case "priority":
		pt.Priority = v
	case "weight":
		pt.Weight = v
	}
	return true
}

// label parses a service label and returns it lower-cased.
func (p *tagParser) label() (string, bool) {
	start := p.pos
	if p.peek() == '_' {
		return p.srvLabel()
	}
	if !isLabelChar(p.peek()) {
		if p.pos == len(p.tag) {
			return "", p.fail("expected a service name, found end of tag")
		}
		return "", p.fail("expected a service name, found " + strconv.Quote(p.tag[p.pos:p.pos+1]))
	}
	for isLabelChar(p.peek()) || p.peek() == '.' {
		p.pos++
	}
	return p.checkName(start)
}

// srvLabel parses "_name._tcp" or "_name._udp".
func (p *tagParser) srvLabel() (string, bool) {
	start := p.pos
	p.pos++
	for isLabelChar(p.peek()) {
		p.pos++
	}
	rest := p.tag[p.pos:]
	if !strings.HasPrefix(rest, "._tcp") && !strings.HasPrefix(rest, "._udp") {
		p.pos = start
		return "", p.fail(`a name starting with "_" must have the form _name._tcp or _name._udp`)
	}
	p.pos += len("._tcp")
	return p.checkName(start)
}

func (p *tagParser) checkName(start int) (string, bool) {
	name := p.tag[start:p.pos]
	if strings.HasSuffix(name, ".") || strings.Contains(name, "..") {
		p.pos = start
		return "", p.fail("service name " + strconv.Quote(name) + " has an empty label")
	}
	// Each label is bounded, not the name: Triton CNS took dotted names
	// of any length, and one whose labels fit is a valid DNS name (a
	// record name over 253 octets is skipped where it is made,
	// name_too_long).
	for label := range strings.SplitSeq(name, ".") {
		if len(label) > maxLabel {
			p.pos = start
			return "", p.fail("service name " + strconv.Quote(name) + " has a label longer than 63 octets")
		}
	}
	return strings.ToLower(name), true
}

func isDigit(c byte) bool { return c >= '0' && c <= '9' }

func isLabelChar(c byte) bool {
	return isDigit(c) || c == '-' || (c|0x20 >= 'a' && c|0x20 <= 'z')
}

func parseUint16(s string, lowest uint64) (uint16, bool) {
	if s == "" {
		return 0, false
	}
	for i := 0; i < len(s); i++ {
		if !isDigit(s[i]) {
			return 0, false
		}
	}
	v, err := strconv.ParseUint(s, 10, 64)
	if err != nil || v < lowest || v > 65535 {
		return 0, false
	}
	return uint16(v), true
}
