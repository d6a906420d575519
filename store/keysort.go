package store

import (
	"cmp"
	"slices"
	"strings"
)

// The bulk build sorts a zone's names twice: their canonical keys into
// nameOrder (canonicalOrder) and the names themselves by their bytes
// (the diff's order, allRecords and walkDiff). cnsd's names share long
// prefixes both ways: read from the right, every instance name of an
// account starts with the zone's labels, the account's UUID or login
// and "inst", fifty bytes or more; read from the left, the names under
// a network's prefix, or of one alias, start alike. A sort comparing
// whole strings compares those bytes again in every comparison, each
// string somewhere else on the heap.
//
// sortKeyed sorts eight bytes at a time instead (a most significant
// digit first radix sort, each digit a uint64 sorted as a number): the
// keys are sorted by their first eight bytes after the ones they all
// share, then each run of keys equal there by the next eight bytes after
// the ones the run shares, and so on. A key's bytes are read once for
// each digit it needs, in one pass over the keys, and the bytes a group
// shares are skipped at once: an account's names are told apart by the
// bytes of their instance's label, not by the fifty before it.

// keyed is a key, its position and its digit being sorted.
type keyed struct {
	pre uint64 // digit: eight bytes from where the key's group differs, padded with zeros
	s   string
	i   int32
	// h is a hash of s for whoever made the key (canonicalOrder): the
	// sort only carries it, in what was the struct's padding.
	h uint32
}

// smallGroup is the most keys of a group sorted by comparing their
// strings (from the bytes they share) rather than digit by digit.
const smallGroup = 12

// sortKeyed sorts ks by s as strings.Compare orders strings; equal keys
// end next to each other, in no particular order. pre is overwritten.
func sortKeyed(ks []keyed) { sortFrom(ks, 0) }

// sortFrom sorts ks, which share their first off bytes, as sortKeyed.
func sortFrom(ks []keyed, off int) {
	if len(ks) == 0 {
		return
	}
	type group struct{ lo, hi, off int } // ks[lo:hi] share their first off bytes
	stack := []group{{0, len(ks), off}}
	for len(stack) > 0 {
		gr := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		g := ks[gr.lo:gr.hi]
		if len(g) <= smallGroup {
			slices.SortFunc(g, func(a, b keyed) int { return strings.Compare(a.s[gr.off:], b.s[gr.off:]) })
			continue
		}
		off := gr.off + sharedFrom(g, gr.off)
		for k := range g {
			g[k].pre = digit(g[k].s, off)
		}
		slices.SortFunc(g, func(a, b keyed) int { return cmp.Compare(a.pre, b.pre) })
		for k := 0; k < len(g); {
			j, short := k+1, len(g[k].s) < off+digitBytes
			for j < len(g) && g[j].pre == g[k].pre {
				short = short || len(g[j].s) < off+digitBytes
				j++
			}
			switch {
			case j-k == 1:
			case short:
				// Some key ended within the digit: its padding may
				// equal another's zero bytes.
				run := g[k:j]
				slices.SortFunc(run, func(a, b keyed) int { return strings.Compare(a.s[off:], b.s[off:]) })
			default:
				// The keys share the digit's bytes and may differ
				// further on.
				stack = append(stack, group{gr.lo + k, gr.lo + j, off + digitBytes})
			}
			k = j
		}
	}
}

// digitBytes is how many of a key's bytes one digit holds.
const digitBytes = 8

// digit is the eight bytes of s from off (at most len(s)), big endian,
// padded with zero bytes. Digits compare as the strings' bytes from off
// do, up to the eighth, but for a padding zero against a zero byte: two
// keys with equal digits, one of them shorter than eight bytes from off,
// are told apart by their bytes.
func digit(s string, off int) uint64 {
	s = s[off:]
	if len(s) >= digitBytes {
		return uint64(s[0])<<56 | uint64(s[1])<<48 | uint64(s[2])<<40 | uint64(s[3])<<32 |
			uint64(s[4])<<24 | uint64(s[5])<<16 | uint64(s[6])<<8 | uint64(s[7])
	}
	var p uint64
	for i := range digitBytes {
		p <<= 8
		if i < len(s) {
			p |= uint64(s[i])
		}
	}
	return p
}

// sharedFrom returns how many bytes after their first off (which they
// share) the keys of g all share.
func sharedFrom(g []keyed, off int) int {
	first := g[0].s[off:]
	n := len(first)
	for _, k := range g[1:] {
		if n = commonPrefix(first[:n], k.s[off:]); n == 0 {
			break
		}
	}
	return n
}

// commonPrefix returns how many bytes a and b share at their start.
func commonPrefix(a, b string) int {
	n := min(len(a), len(b))
	i := 0
	for i+8 <= n && load64(a, i) == load64(b, i) {
		i += 8
	}
	for i < n && a[i] == b[i] {
		i++
	}
	return i
}
