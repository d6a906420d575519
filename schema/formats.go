package schema

import (
	"encoding/base64"
	"fmt"
	"net"
	"net/netip"
	"net/url"
	"strconv"
	"strings"
)

// formats are the string formats the schema names "cnsd-*". Each gets
// the decoded value and accepts values that are not strings, which the
// schema's type keyword reports instead.
var formats = map[string]func(any) bool{
	"cnsd-hostmaster": stringFormat(isHostmaster),
	"cnsd-peer":       stringFormat(isPeer),
	"cnsd-ip":         stringFormat(isIP),
	"cnsd-ip-prefix":  stringFormat(isIPOrPrefix),
	"cnsd-listen":     stringFormat(isListenAddress),
	"cnsd-redis-url":  stringFormat(isRedisURL),
	"cnsd-base64":     stringFormat(isSecret),
}

// stringFormat adapts a check of strings to the validator's signature.
func stringFormat(f func(string) bool) func(any) bool {
	return func(v any) bool {
		s, ok := v.(string)
		return !ok || f(s)
	}
}

// isHostName reports whether s is a host name: dot-separated labels of 1
// to 63 letters, digits or '-', not starting or ending with '-', at most
// 253 characters, no trailing dot. The schema's hostName pattern says the
// same; a test keeps the two in step.
func isHostName(s string) bool {
	if len(s) == 0 || len(s) > 253 {
		return false
	}
	for label := range strings.SplitSeq(s, ".") {
		if !isLabel(label) {
			return false
		}
	}
	return true
}

// isLabel reports whether s is one label of a host name.
func isLabel(s string) bool {
	if len(s) == 0 || len(s) > 63 || s[0] == '-' || s[len(s)-1] == '-' {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '-') {
			return false
		}
	}
	return true
}

// isHostmaster reports whether s is user@domain: one '@', a user part
// without spaces or control characters and a host name as domain.
func isHostmaster(s string) bool {
	user, domain, ok := strings.Cut(s, "@")
	if !ok || user == "" || strings.ContainsFunc(user, func(r rune) bool { return r <= ' ' || r == 0x7f }) {
		return false
	}
	return isHostName(domain)
}

// isIP reports whether s is an IPv4 or IPv6 address without a zone.
func isIP(s string) bool {
	a, err := netip.ParseAddr(s)
	return err == nil && a.Zone() == ""
}

// isPeer reports whether s names a secondary: see SplitPeer.
func isPeer(s string) bool {
	_, _, err := SplitPeer(s)
	return err == nil
}

// SplitPeer splits a secondary as configured — an IP address or a host
// name, optionally with a port: "192.0.2.1", "ns1.example.com",
// "192.0.2.1:5353", "[2001:db8::1]:5353", "ns1.example.com:5353" — into
// the host and the port (53 when none is given).
func SplitPeer(s string) (host string, port uint16, err error) {
	if isIP(s) || isHostName(s) {
		return s, 53, nil
	}
	h, p, err := net.SplitHostPort(s)
	if err != nil {
		return "", 0, fmt.Errorf("peer %q: %w", s, err)
	}
	n, err := strconv.ParseUint(p, 10, 16)
	if err != nil || n == 0 {
		return "", 0, fmt.Errorf("peer %q: port %q is not 1-65535", s, p)
	}
	if !isIP(h) && !isHostName(h) {
		return "", 0, fmt.Errorf("peer %q: %q is neither an IP address nor a host name", s, h)
	}
	return h, uint16(n), nil
}

// isIPOrPrefix reports whether s is an IP address or a CIDR prefix.
func isIPOrPrefix(s string) bool {
	_, err := parsePrefix(s)
	return err == nil
}

// parsePrefix parses an address (as a single-address prefix) or a CIDR
// prefix; host bits of a prefix are cleared.
func parsePrefix(s string) (netip.Prefix, error) {
	if strings.Contains(s, "/") {
		p, err := netip.ParsePrefix(s)
		return p.Masked(), err
	}
	a, err := netip.ParseAddr(s)
	if err == nil && a.Zone() != "" {
		_, err = netip.ParsePrefix(s + "/128") // the error names the zone
	}
	if err != nil {
		return netip.Prefix{}, err
	}
	return netip.PrefixFrom(a, a.BitLen()), nil
}

// isListenAddress reports whether s is host:port with an empty host, an
// IP address (a zone is allowed) or a host name, and a port 0-65535.
func isListenAddress(s string) bool {
	host, port, err := net.SplitHostPort(s)
	if err != nil {
		return false
	}
	if _, err := strconv.ParseUint(port, 10, 16); err != nil {
		return false
	}
	_, ipErr := netip.ParseAddr(host)
	return host == "" || ipErr == nil || isHostName(host)
}

// isRedisURL reports whether s is a redis:// or rediss:// URL with a host,
// or a unix:// URL with a path.
func isRedisURL(s string) bool {
	u, err := url.Parse(s)
	if err != nil {
		return false
	}
	switch u.Scheme {
	case "redis", "rediss":
		return u.Host != ""
	case "unix":
		return u.Path != ""
	}
	return false
}

// isSecret reports whether s is standard, padded base64 of at least one
// byte, on one line.
func isSecret(s string) bool {
	if strings.ContainsAny(s, "\r\n") { // the decoder would skip them
		return false
	}
	b, err := base64.StdEncoding.Strict().DecodeString(s)
	return err == nil && len(b) > 0
}
