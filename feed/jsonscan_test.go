package feed

import (
	"encoding/binary"
	"math/bits"
	"math/rand/v2"
	"testing"
)

// TestStrSpecial8 holds str's jump to the lowest mark: the lowest byte
// strSpecial8 marks is the first that is a quote, a backslash, a control
// character or not ASCII, and a word without one has no mark.
func TestStrSpecial8(t *testing.T) {
	special := func(c byte) bool { return c == '"' || c == '\\' || c < 0x20 || c >= 0x80 }
	// Bytes next to the bounds of the tricks, where borrows and carries
	// would show, and plain ones.
	pick := []byte{0, 1, 0x1f, 0x20, 0x21, '"' - 1, '"', '"' + 1, '\\' - 1, '\\', '\\' + 1,
		'a', 'z', 0x7e, 0x7f, 0x80, 0x9f, 0xa0, 0xdc, 0xff}
	r := rand.New(rand.NewPCG(3, 4))
	var w [8]byte
	for range 200_000 {
		for i := range w {
			if r.IntN(3) == 0 {
				w[i] = pick[r.IntN(len(pick))]
			} else {
				w[i] = byte(0x20 + r.IntN(0x5f))
			}
		}
		first := 8
		for i, c := range w {
			if special(c) {
				first = i
				break
			}
		}
		m := strSpecial8(binary.LittleEndian.Uint64(w[:]))
		got := 8
		if m != 0 {
			got = bits.TrailingZeros64(m) >> 3
		}
		if got != first {
			t.Fatalf("strSpecial8(%q): lowest mark at %d, first special byte at %d", w, got, first)
		}
	}
}
