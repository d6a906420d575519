package main

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"
)

// table prints rows under a header, in aligned columns.
func table(w io.Writer, header []string, rows [][]string) error {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, strings.Join(header, "\t"))
	for _, r := range rows {
		fmt.Fprintln(tw, strings.Join(r, "\t"))
	}
	return tw.Flush()
}

// printJSON prints v indented, for -j.
func printJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

// serialTime reads the time a serial was made from, when cnsd made it
// from the clock (it counts 10-second steps since 1900 in calendar
// fields); a serial that ran ahead of the clock reads as a time to come.
func serialTime(s uint32) time.Time {
	sec := int(s%6) * 10
	s /= 6
	minute := int(s % 60)
	s /= 60
	hour := int(s % 24)
	s /= 24
	day := int(s%31) + 1
	s /= 31
	month := time.Month(s%12 + 1)
	year := int(s/12) + 1900
	return time.Date(year, month, day, hour, minute, sec, 0, time.UTC)
}

// age says how long ago t was, roughly, for people.
func age(now, t time.Time) string {
	d := now.Sub(t)
	switch {
	case d < 10*time.Second:
		return "<10s"
	case d < time.Hour:
		return d.Truncate(time.Second).String()
	case d < 48*time.Hour:
		return d.Truncate(time.Minute).String()
	}
	return fmt.Sprintf("%dd", int(d.Hours()/24))
}

func yesNo(b bool) string {
	if b {
		return "yes"
	}
	return "no"
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}
