package store

import "time"

// Serial is a zone's SOA serial, compared in RFC 1982 arithmetic.
type Serial uint32

// Less reports whether s precedes t in RFC 1982 serial number arithmetic.
// Two serials exactly 2^31 apart are not ordered; Less is false both ways.
func (s Serial) Less(t Serial) bool {
	d := uint32(t) - uint32(s)
	return d != 0 && d < 1<<31
}

// TimeSerial is the time-based serial of Triton CNS: the number of
// 10-second steps since 1900 with every month counted as 31 days. cnsd uses
// the same scheme so that secondaries holding serials from a Triton CNS it
// replaces keep accepting its updates.
func TimeSerial(t time.Time) Serial {
	t = t.UTC()
	s := uint32(t.Year() - 1900)
	s = s*12 + uint32(t.Month()-1)
	s = s*31 + uint32(t.Day()-1)
	s = s*24 + uint32(t.Hour())
	s = s*60 + uint32(t.Minute())
	s = s*6 + uint32(t.Second()/10)
	return Serial(s)
}

// NextSerial returns max(TimeSerial(now), prev+1) in RFC 1982 order: the
// serial of a new version of a zone whose current serial is prev. It never
// repeats or goes back, whatever the clock does.
func NextSerial(prev Serial, now time.Time) Serial {
	next := prev + 1
	if ts := TimeSerial(now); next.Less(ts) {
		return ts
	}
	return next
}
