package xfr

import (
	"slices"
	"strings"
	"testing"
)

// splitName is the reference scanName is checked against: a label at a
// time with strings.IndexByte.
func splitName(s string) (starts []int, ok, escaped bool) {
	if strings.IndexByte(s, '\\') >= 0 {
		return nil, false, true
	}
	if s == "." {
		return nil, true, false
	}
	if len(s) == 0 || s[len(s)-1] != '.' || len(s)+1 > 255 {
		return nil, false, false
	}
	for begin := 0; begin < len(s); {
		n := strings.IndexByte(s[begin:], '.')
		if n == 0 || n > 63 {
			return nil, false, false
		}
		starts = append(starts, begin)
		begin += n + 1
	}
	return starts, true, false
}

func FuzzScanName(f *testing.F) {
	for _, s := range []string{".", "", "a.", "a", "vm.inst.example.test.", `v\.m.example.test.`, "a..b.",
		strings.Repeat("a", 63) + ".b.", strings.Repeat("a", 64) + ".b.", strings.Repeat("abc.", 63),
		"0f1e2d3c-4b5a-4c8a-9d2f-000000000001.inst.0f1e2d3c-4b5a-4c8a-9d2f-000000000002.cns.bench.test.",
		"a/b.c.", "\x00.\x2f\x2e.", "abcdefg\x7f", "abcdefg\x20", "abcdefg\x21\x7e\x80\xff", "0 10 80 vm.example.test.", "ab" + strings.Repeat("a", 70) + `\.`} {
		f.Add(s, "x."+s)
	}
	f.Fuzz(func(t *testing.T, s, other string) {
		var nw nameWriter
		ok, escaped := nw.scanName(s)
		starts, wantOK, wantEscaped := splitName(s)
		switch {
		case escaped && !wantEscaped:
			t.Fatalf("scanName(%q): escaped, but it holds no backslash", s)
		case escaped:
		case wantEscaped && ok:
			t.Fatalf("scanName(%q) = ok, not escaped; it holds a backslash", s)
		case wantEscaped:
			// A fault before the backslash: name looks for one.
		case ok != wantOK || ok && !slices.Equal(nw.starts, starts):
			t.Fatalf("scanName(%q) = %v, starts %v; want %v, %v", s, ok, nw.starts, wantOK, starts)
		}
		i, j := commonSuffix(s, other)
		wi, wj := len(s), len(other)
		for wi > 0 && wj > 0 && s[wi-1] == other[wj-1] {
			wi, wj = wi-1, wj-1
		}
		if i != wi || j != wj {
			t.Fatalf("commonSuffix(%q, %q) = %d, %d; want %d, %d", s, other, i, j, wi, wj)
		}
		want := true
		for k := 0; k < len(s); k++ {
			if s[k] <= ' ' || s[k] >= 0x7f {
				want = false
			}
		}
		if got := graphic(s); got != want {
			t.Fatalf("graphic(%q) = %v, want %v", s, got, want)
		}
	})
}
