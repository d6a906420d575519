// Package logtest gives tests a log destination that the goroutines
// logging to it and the test reading it may share.
package logtest

import (
	"bytes"
	"slices"
	"strings"
	"sync"
)

// Buffer collects log output written from several goroutines.
type Buffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *Buffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *Buffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// Lines returns the lines written so far that contain every one of parts.
func (b *Buffer) Lines(parts ...string) []string {
	var out []string
	for l := range strings.Lines(b.String()) {
		if !slices.ContainsFunc(parts, func(p string) bool { return !strings.Contains(l, p) }) {
			out = append(out, l)
		}
	}
	return out
}
