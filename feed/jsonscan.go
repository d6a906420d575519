package feed

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"math/bits"
	"unicode/utf8"
)

// jsonScan walks one JSON text in a single pass, for decoders that pick
// a few fields out of large objects (decodeVM): the fields they want are
// read where they stand, everything else is skipped without building
// anything. It accepts exactly what encoding/json accepts — the same
// grammar, the same nesting bound — so that a decoder built on it fails
// on the same inputs as json.Unmarshal did; strings it cannot take as
// they are (escapes, bytes that are not UTF-8) are left to encoding/json
// to unquote, so that they decode to the same text.
//
// A syntax error is sticky: bad is set, the position jumps to the end,
// and every later read returns nothing, so decoders need not check after
// each step; they check bad once at the end.
type jsonScan struct {
	b     []byte
	i     int
	depth int  // objects and arrays open around the position
	bad   bool // b is not one valid JSON text
}

// jsonMaxDepth is encoding/json's bound on nesting: deeper is a syntax
// error there, so it is one here.
const jsonMaxDepth = 10000

func (s *jsonScan) fail() {
	s.bad = true
	s.i = len(s.b)
}

// peek skips white space and returns the next byte, 0 at the end.
func (s *jsonScan) peek() byte {
	for s.i < len(s.b) {
		switch c := s.b[s.i]; c {
		case ' ', '\t', '\n', '\r':
			s.i++
		default:
			return c
		}
	}
	return 0
}

// end reports whether nothing but white space is left: the text ends
// with the value just read, as json.Unmarshal requires. (peek's 0 may
// be a NUL byte, which is not white space.)
func (s *jsonScan) end() bool {
	s.peek()
	return s.i == len(s.b) && !s.bad
}

// str reads the string at the position (after peek returned '"') and
// returns it with its quotes; plain says it is printable ASCII without
// escapes, so its bytes between the quotes are its value.
func (s *jsonScan) str() (quoted []byte, plain bool) {
	b, start := s.b, s.i
	plain = true
	for j := s.i + 1; ; j++ {
		// Strings are most of a VM object's bytes, and most are short:
		// eight at a time, straight to the first byte that needs a look
		// (often the closing quote) rather than to the word holding it.
		for j+8 <= len(b) {
			m := strSpecial8(binary.LittleEndian.Uint64(b[j:]))
			if m != 0 {
				j += bits.TrailingZeros64(m) >> 3
				break
			}
			j += 8
		}
		if j >= len(b) {
			s.fail()
			return nil, false
		}
		switch c := b[j]; {
		case c == '"':
			s.i = j + 1
			return b[start:s.i], plain
		case c == '\\':
			plain = false
			if j = s.escape(j + 1); j < 0 {
				return nil, false
			}
		case c < 0x20:
			s.fail()
			return nil, false
		case c >= 0x80:
			plain = false
		}
	}
}

// strSpecial8 marks with its high bit each of the eight bytes of x
// (little-endian: the first byte is the lowest) that may be a quote, a
// backslash, a control character or not ASCII: the bit tricks of "Bit
// Twiddling Hacks", "determine if a word has a byte less than n" and
// "… equal to n". A borrow only runs upwards from a byte that is marked
// rightly, so the lowest mark is always right: the bytes below it need
// no look. Marks above it may be false; they only cost a look.
func strSpecial8(x uint64) uint64 {
	const ones, highs = 0x0101010101010101, 0x8080808080808080
	less := func(v uint64, n uint64) uint64 { return (v - ones*n) & ^v & highs }
	return less(x, 0x20) | less(x^(ones*'"'), 1) | less(x^(ones*'\\'), 1) | x&highs
}

// escape checks the escape after the backslash at b[j-1] and returns the
// index of its last byte, or -1 (and fails) if it is not one of JSON's.
func (s *jsonScan) escape(j int) int {
	b := s.b
	if j < len(b) {
		switch b[j] {
		case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
			return j
		case 'u':
			if j+4 < len(b) && isHex(b[j+1]) && isHex(b[j+2]) && isHex(b[j+3]) && isHex(b[j+4]) {
				return j + 4
			}
		}
	}
	s.fail()
	return -1
}

func isHex(c byte) bool {
	return '0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F'
}

// unquoteBytes is the value of a string str read; a plain one is not
// copied, so a key can be matched without allocating. After a syntax
// error (quoted is nil) it is empty: the decoding fails anyway.
func unquoteBytes(quoted []byte, plain bool) []byte {
	if len(quoted) < 2 {
		return nil
	}
	inner := quoted[1 : len(quoted)-1]
	if plain || utf8.Valid(inner) && bytes.IndexByte(inner, '\\') < 0 {
		return inner
	}
	var v string
	_ = json.Unmarshal(quoted, &v) // str checked it: it cannot fail
	return []byte(v)
}

// unquote is the value of a string str read, as a string.
func unquote(quoted []byte, plain bool) string {
	return string(unquoteBytes(quoted, plain))
}

// number reads the number at the position, in JSON's grammar, and
// returns its text.
func (s *jsonScan) number() []byte {
	b, i := s.b, s.i
	if i < len(b) && b[i] == '-' {
		i++
	}
	switch {
	case i < len(b) && b[i] == '0':
		i++
	case i < len(b) && '1' <= b[i] && b[i] <= '9':
		i = digits(b, i)
	default:
		s.fail()
		return nil
	}
	if i < len(b) && b[i] == '.' {
		if i+1 == len(b) || b[i+1] < '0' || b[i+1] > '9' {
			s.fail()
			return nil
		}
		i = digits(b, i+1)
	}
	if i < len(b) && (b[i] == 'e' || b[i] == 'E') {
		i++
		if i < len(b) && (b[i] == '+' || b[i] == '-') {
			i++
		}
		if i == len(b) || b[i] < '0' || b[i] > '9' {
			s.fail()
			return nil
		}
		i = digits(b, i)
	}
	start := s.i
	s.i = i
	return b[start:i]
}

func digits(b []byte, i int) int {
	for i < len(b) && '0' <= b[i] && b[i] <= '9' {
		i++
	}
	return i
}

// literal reads true, false or null, whichever lit is.
func (s *jsonScan) literal(lit string) {
	if len(s.b)-s.i < len(lit) || string(s.b[s.i:s.i+len(lit)]) != lit {
		s.fail()
		return
	}
	s.i += len(lit)
}

// skip reads one value of any kind and returns its text.
func (s *jsonScan) skip() []byte {
	start := s.i
	switch c := s.peek(); {
	case c == '"':
		s.str()
	case c == '{':
		s.object(func([]byte, bool) { s.skip() })
	case c == '[':
		s.array(func(int) { s.skip() })
	case c == 't':
		s.literal("true")
	case c == 'f':
		s.literal("false")
	case c == 'n':
		s.literal("null")
	case c == '-' || '0' <= c && c <= '9':
		s.number()
	default:
		s.fail()
	}
	if s.bad {
		return nil
	}
	return s.b[start:s.i]
}

// open enters the object or array whose first byte is at the position.
func (s *jsonScan) open() bool {
	s.i++
	s.depth++
	if s.depth > jsonMaxDepth {
		s.fail()
	}
	return !s.bad
}

// object reads the object at the position (after peek returned '{'),
// calling field with each key, as str returned it, with the position at
// its value, which field must read whole (skip it if nothing else).
func (s *jsonScan) object(field func(quoted []byte, plain bool)) {
	if !s.open() {
		return
	}
	if s.peek() == '}' {
		s.i++
		s.depth--
		return
	}
	for !s.bad {
		if s.peek() != '"' {
			s.fail()
			return
		}
		k, plain := s.str()
		if s.peek() != ':' {
			s.fail()
			return
		}
		s.i++
		s.peek()
		field(k, plain)
		switch s.peek() {
		case ',':
			s.i++
		case '}':
			s.i++
			s.depth--
			return
		default:
			s.fail()
		}
	}
}

// array reads the array at the position (after peek returned '['),
// calling elem with each index and the position at the element, which
// elem must read whole.
func (s *jsonScan) array(elem func(i int)) {
	if !s.open() {
		return
	}
	if s.peek() == ']' {
		s.i++
		s.depth--
		return
	}
	for n := 0; !s.bad; n++ {
		s.peek()
		elem(n)
		switch s.peek() {
		case ',':
			s.i++
		case ']':
			s.i++
			s.depth--
			return
		default:
			s.fail()
		}
	}
}
