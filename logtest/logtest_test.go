package logtest

import (
	"fmt"
	"slices"
	"sync"
	"testing"
)

func TestBufferSharedWrites(t *testing.T) {
	var b Buffer
	var wg sync.WaitGroup
	for i := range 4 {
		wg.Go(func() {
			for j := range 50 {
				fmt.Fprintf(&b, "writer=%d line=%d\n", i, j)
			}
		})
	}
	wg.Wait()
	if n := len(b.Lines()); n != 200 {
		t.Errorf("%d lines, want 200", n)
	}
	if got := b.Lines("writer=2", "line=7\n"); !slices.Equal(got, []string{"writer=2 line=7\n"}) {
		t.Errorf("Lines(writer=2, line=7) = %q", got)
	}
	if got := b.Lines("writer=9"); got != nil {
		t.Errorf("Lines(writer=9) = %q, want none", got)
	}
}
