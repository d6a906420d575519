package mockcloud

import (
	"math"
	"regexp"
	"slices"
	"strings"
)

// restify-warden's validators (lib/validators.js, messages from
// lib/constants.js) and NAPI's own (sdc-napi lib/util/validate.js,
// lib/models/network.js validateGetUUID), for query values. A validator
// that takes one string refuses a parameter sent twice as warden's does
// a list ("must be a string") or, where NAPI would fail inside on a
// list, with its own message.

const (
	napiMsgLimit  = "invalid limit, must be an integer greater than 0 or less than or equal to 1000"
	napiMsgOffset = "invalid value, offset must be an integer greater than or equal to 0"
	napiMsgStrArr = "must be an array of strings"
	napiMaxStrLen = 64
)

var (
	napiUUIDRe   = regexp.MustCompile(`^[a-f0-9]{8}-[a-f0-9]{4}-[a-f0-9]{4}-[a-f0-9]{4}-[a-f0-9]{12}$`)
	napiPrefixRe = regexp.MustCompile(`^[0-9a-f*-]+$`)
)

// napiNetworkFieldNames is VALID_FIELDS of lib/models/network.js.
var napiNetworkFieldNames = []string{"description", "fabric", "internet_nat", "gateway", "mtu", "name",
	"nic_tag", "owner_uuid", "owner_uuids", "provision_end_ip", "provision_start_ip", "resolvers",
	"routes", "subnet", "uuid", "vlan_id"}

// napiInteger is warden's isNotInteger inverted: Number of the text,
// which must have no white space around it and be whole.
func napiInteger(vals []string) (float64, bool) {
	if len(vals) != 1 || vals[0] == "" || strings.TrimSpace(vals[0]) != vals[0] {
		return 0, false
	}
	n, ok := jsNumber(vals[0])
	return n, ok && n == math.Trunc(n)
}

func napiLimit(name string, vals []string) *fieldError {
	if n, ok := napiInteger(vals); !ok || n < 1 || n > pageLimit {
		return napiInvalid(name, napiMsgLimit)
	}
	return nil
}

func napiOffset(name string, vals []string) *fieldError {
	if n, ok := napiInteger(vals); !ok || n < 0 {
		return napiInvalid(name, napiMsgOffset)
	}
	return nil
}

func napiUUID(name string, vals []string) *fieldError {
	if len(vals) != 1 || !napiUUIDRe.MatchString(vals[0]) {
		return napiInvalid(name, "invalid UUID")
	}
	return nil
}

// napiNetworkUUID is validateGetUUID: a UUID, or "admin".
func napiNetworkUUID(name string, vals []string) *fieldError {
	if len(vals) == 1 && vals[0] == "admin" {
		return nil
	}
	return napiUUID(name, vals)
}

// napiUUIDPrefix is warden's uuidPrefix: a UUID, or a prefix of one
// ending in a single "*". A whole value that is not a UUID is reported
// under the field "Invalid UUID", as warden reports it.
func napiUUIDPrefix(name string, vals []string) *fieldError {
	if len(vals) != 1 {
		return napiInvalid(name, "must be a string")
	}
	s := vals[0]
	stars := strings.Count(s, "*")
	switch {
	case len(s) > napiMaxStrLen:
		return napiInvalid(name, "must not be longer than 64 characters")
	case strings.TrimSpace(s) == "":
		return napiInvalid(name, "must not be empty")
	case stars > 1:
		return napiInvalid(name, "need only 1 wildcard")
	case stars == 1 && !strings.HasSuffix(s, "*"):
		return napiInvalid(name, "only UUID prefixes are allowed")
	case stars == 1 && !napiPrefixRe.MatchString(s):
		return napiInvalid(name, "UUID prefix has invalid chars")
	case stars == 0 && !napiUUIDRe.MatchString(s):
		return napiInvalid("Invalid UUID", "Invalid parameters")
	}
	return nil
}

func napiBool(name string, vals []string) *fieldError {
	if len(vals) != 1 || vals[0] != "true" && vals[0] != "false" {
		return napiInvalid(name, "must be a boolean value")
	}
	return nil
}

func napiFamily(name string, vals []string) *fieldError {
	if len(vals) != 1 || vals[0] != "ipv4" && vals[0] != "ipv6" {
		return napiInvalid(name, `must be one of: "ipv4", "ipv6"`)
	}
	return nil
}

// napiString is warden's string: not longer than 64, not blank.
func napiString(name string, vals []string) *fieldError {
	switch {
	case len(vals) != 1:
		return napiInvalid(name, "must be a string")
	case len(vals[0]) > napiMaxStrLen:
		return napiInvalid(name, "must not be longer than 64 characters")
	case strings.TrimSpace(vals[0]) == "":
		return napiInvalid(name, "must not be empty")
	}
	return nil
}

// napiStringOrArray is warden's stringOrArray: a good string, or else a
// list (a parameter sent several times) of non-blank strings; a single
// bad string is judged as a list and is not one.
func napiStringOrArray(name string, vals []string) *fieldError {
	if len(vals) == 1 {
		if napiString(name, vals) != nil {
			return napiInvalid(name, napiMsgStrArr)
		}
		return nil
	}
	for _, v := range vals {
		if strings.TrimSpace(v) == "" {
			return napiInvalid(name, "must not be empty")
		}
	}
	return nil
}

// napiNetworkFields is warden's arrayOfFields: only a list passes, so a
// single fields parameter never does.
func napiNetworkFields(name string, vals []string) *fieldError {
	if len(vals) < 2 {
		return napiInvalid(name, napiMsgStrArr)
	}
	if len(vals) > len(napiNetworkFieldNames) {
		return napiInvalid(name, "can only specify a maximum of 16 fields")
	}
	for _, v := range vals {
		if !slices.Contains(napiNetworkFieldNames, v) {
			return napiInvalid(name, "unknown field specified")
		}
	}
	return nil
}

// napiVLAN is NAPI's validateVLAN: Number of the value in 0–4094 (the
// empty string is 0).
func napiVLAN(name string, vals []string) *fieldError {
	n, ok := jsNumber(strings.Join(vals, ","))
	if len(vals) != 1 || !ok || n < 0 || n > 4094 {
		return napiInvalid(name, "VLAN ID must be a number between 0 and 4094, and not 1")
	}
	return nil
}

// napiMAC is NAPI's validateMAC over node-macaddr's parse: six octets of
// one or two hex digits separated by ":" or "-" (one kind throughout), or
// twelve hex digits; any case.
func napiMAC(name string, vals []string) *fieldError {
	if len(vals) != 1 || !macParses(vals[0]) {
		return napiInvalid(name, "invalid MAC address")
	}
	return nil
}

var (
	macBareRe = regexp.MustCompile(`^[0-9a-f]{12}$`)
	macSepRe  = regexp.MustCompile(`^[0-9a-f]{1,2}([:-])[0-9a-f]{1,2}(?:[:-][0-9a-f]{1,2}){4}$`)
)

func macParses(s string) bool {
	s = strings.ToLower(s)
	if macBareRe.MatchString(s) {
		return true
	}
	m := macSepRe.FindStringSubmatch(s)
	return m != nil && strings.Count(s, m[1]) == 5
}

// macKey is a parsed MAC's twelve hex digits: how NAPI keys its NICs.
func macKey(s string) string {
	s = strings.ToLower(s)
	if macBareRe.MatchString(s) {
		return s
	}
	var b strings.Builder
	for _, o := range strings.FieldsFunc(s, func(r rune) bool { return r == ':' || r == '-' }) {
		if len(o) == 1 {
			b.WriteByte('0')
		}
		b.WriteString(o)
	}
	return b.String()
}
