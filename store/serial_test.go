package store

import (
	"testing"
	"time"
)

func TestSerialLess(t *testing.T) {
	tests := []struct {
		s, t Serial
		less bool
	}{
		{1, 2, true},
		{2, 1, false},
		{5, 5, false},
		{0xffffffff, 0, true}, // wraps
		{0, 0x7fffffff, true},
		{0, 0x80000000, false}, // undefined: neither is less
		{0x80000000, 0, false},
		{0xfffffff0, 0x10, true},
	}
	for _, tt := range tests {
		if got := tt.s.Less(tt.t); got != tt.less {
			t.Errorf("%d.Less(%d) = %v, want %v", tt.s, tt.t, got, tt.less)
		}
	}
}

func TestTimeSerial(t *testing.T) {
	// ((((126*12+10)*31+21)*24+13)*60+7)*6+4
	at := time.Date(2026, 11, 22, 13, 7, 45, 0, time.UTC)
	if got, want := TimeSerial(at), Serial(407838646); got != want {
		t.Errorf("TimeSerial(%v) = %d, want %d", at, got, want)
	}
	if TimeSerial(at.Add(10*time.Second)) != TimeSerial(at)+1 {
		t.Error("ten seconds later should be one step later")
	}
}

func TestNextSerial(t *testing.T) {
	now := time.Date(2026, 11, 22, 13, 7, 45, 0, time.UTC)
	ts := TimeSerial(now)
	tests := []struct {
		name string
		prev Serial
		want Serial
	}{
		{"behind the clock: time serial", ts - 100, ts},
		{"at the clock: one more", ts, ts + 1},
		{"ahead of the clock: one more", ts + 50, ts + 51},
		{"wrapped past zero: time serial", 0xffffffff, ts},
		{"far ahead, across 2^32: one more", ts + 1<<31 - 10, ts + 1<<31 - 9},
	}
	for _, tt := range tests {
		if got := NextSerial(tt.prev, now); got != tt.want {
			t.Errorf("%s: NextSerial(%d) = %d, want %d", tt.name, tt.prev, got, tt.want)
		}
	}
}
