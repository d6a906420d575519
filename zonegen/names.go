package zonegen

import "strings"

const (
	maxLabel = 63
	maxName  = 253 // presentation length without the trailing dot
)

// Dnsify lower-cases s and replaces each run of characters outside
// [a-z0-9-] with one "-", as Triton CNS did for aliases, logins and
// network names.
func Dnsify(s string) string {
	if isDnsified(s) {
		return s
	}
	return string(appendDnsify(make([]byte, 0, len(s)), s))
}

func isDnsified(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-') {
			return false
		}
	}
	return true
}

func appendDnsify(dst []byte, s string) []byte {
	run := false
	for _, r := range strings.ToLower(s) {
		if r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '-' {
			dst = append(dst, byte(r))
			run = false
			continue
		}
		if !run {
			dst = append(dst, '-')
			run = true
		}
	}
	return dst
}

// IsHostName reports whether s is a host name usable as a PTR target:
// labels of [A-Za-z0-9-] that start with a letter or digit, each at most
// 63 octets, 253 in all. A trailing dot (an absolute name in a zone file)
// is not part of a host name: Triton CNS's check (lib/flag-filter.js,
// PTR_REGEX) refuses "mail.example.org." too, and so leaves such a VM
// unlisted, which cnsd must not change.
func IsHostName(s string) bool {
	if s == "" || len(s) > maxName {
		return false
	}
	for label := range strings.SplitSeq(s, ".") {
		if label == "" || len(label) > maxLabel || label[0] == '-' {
			return false
		}
		for i := 0; i < len(label); i++ {
			if c := label[i]; !isLabelChar(c) {
				return false
			}
		}
	}
	return true
}
