package xfr

import (
	"encoding/binary"
	"math/bits"
	"unsafe"
)

// Names are scanned eight octets at a time: a transfer of a million
// records splits and compares some 300,000 owner names of 60–80 octets,
// and a call to strings.IndexByte per label or a loop per octet cost a
// fifth of its CPU (docs/BENCHMARKS.md, "Issue 18: AXFR at 1M records").

const (
	lows  = 0x0101010101010101
	highs = 0x8080808080808080
	dots  = '.' * lows
	backs = '\\' * lows
)

// word returns the eight octets of s from i (i+8 <= len(s)) as one
// little-endian number: octet i+k is in bits 8k to 8k+7.
func word(s string, i int) uint64 {
	return binary.LittleEndian.Uint64(unsafe.Slice(unsafe.StringData(s[i:]), 8))
}

// zeros returns w with the high bit of each zero octet set and every
// other bit clear; unlike the shorter (w-lows)&^w&highs it has no false
// positives above a zero octet.
func zeros(w uint64) uint64 {
	t := (w&^highs + ^uint64(highs)) | w
	return ^(t | ^uint64(highs))
}

// scanName is split and the check for escapes in one pass: ok when s is
// an absolute name that fits the wire and nw.starts its labels' starts,
// escaped when s holds a backslash (then ok says nothing).
func (nw *nameWriter) scanName(s string) (ok, escaped bool) {
	nw.starts = nw.starts[:0]
	if s == "." {
		return true, false
	}
	if len(s) == 0 || s[len(s)-1] != '.' || len(s)+1 > 255 {
		return false, false
	}
	begin, i := 0, 0
	for ; i+8 <= len(s); i += 8 {
		w := word(s, i)
		if zeros(w^backs) != 0 {
			return false, true
		}
		for m := zeros(w ^ dots); m != 0; m &= m - 1 {
			end := i + bits.TrailingZeros64(m)/8
			if n := end - begin; n == 0 || n > 63 {
				return false, false
			}
			nw.starts = append(nw.starts, begin)
			begin = end + 1
		}
	}
	for ; i < len(s); i++ {
		switch s[i] {
		case '\\':
			return false, true
		case '.':
			if n := i - begin; n == 0 || n > 63 {
				return false, false
			}
			nw.starts = append(nw.starts, begin)
			begin = i + 1
		}
	}
	return true, false
}

// commonSuffix returns i and j such that a[i:] == b[j:] is the longest
// common suffix of a and b.
func commonSuffix(a, b string) (i, j int) {
	i, j = len(a), len(b)
	for i >= 8 && j >= 8 {
		if x := word(a, i-8) ^ word(b, j-8); x != 0 {
			k := bits.LeadingZeros64(x) / 8 // equal octets at the end
			return i - k, j - k
		}
		i, j = i-8, j-8
	}
	for i > 0 && j > 0 && a[i-1] == b[j-1] {
		i, j = i-1, j-1
	}
	return i, j
}

// graphic reports whether every octet of s is printable ASCII other
// than the space (0x21–0x7e).
func graphic(s string) bool {
	i := 0
	for ; i+8 <= len(s); i += 8 {
		w := word(s, i)
		x := w &^ highs // each octet's low seven bits: adding to one carries into its high bit only
		// Bad: a high bit set, a low part of 0x7f (+1 reaches 0x80), or
		// one under 0x21 (+0x5f stays under 0x80).
		if (w|(x+lows)|^(x+0x5f*lows))&highs != 0 {
			return false
		}
	}
	for ; i < len(s); i++ {
		if c := s[i]; c <= ' ' || c >= 0x7f {
			return false
		}
	}
	return true
}
