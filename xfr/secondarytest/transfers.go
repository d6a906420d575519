package secondarytest

import (
	"regexp"
	"slices"
	"strconv"
	"strings"
)

// Transfer is one successful incoming zone transfer as the secondary
// logged it.
type Transfer struct {
	Zone string // absolute, lower-case
	// Kind is "IXFR" for an incremental transfer and "AXFR" for a full
	// one, including an IXFR request the primary answered with the whole
	// zone (AXFR-style IXFR); "" from a secondary that does not log which
	// (see LogsTransferKinds).
	Kind   string
	Serial uint32 // the serial transferred
}

// Transfers returns the successful incoming transfers of zone (every
// zone when zone is empty) in the order the secondary logged them.
func (s *Secondary) Transfers(zone string) []Transfer {
	var all []Transfer
	switch s.kind {
	case "bind":
		all = parseBIND(s.Log())
	case "knot":
		all = parseKnot(s.Log())
	case "nsd":
		all = parseNSD(s.Log())
	case "powerdns":
		all = parsePowerDNS(s.Log())
	}
	if zone == "" {
		return all
	}
	var out []Transfer
	for _, tr := range all {
		if tr.Zone == fqdn(zone) {
			out = append(out, tr)
		}
	}
	return out
}

// LogsTransferKinds reports whether the secondary's log tells an
// incremental transfer from a full one. NSD's does not (it logs only the
// serial received); the primary's own counters have to tell.
func (s *Secondary) LogsTransferKinds() bool { return s.kind != "nsd" }

// CountIXFR is how many incremental transfers of zone succeeded.
func (s *Secondary) CountIXFR(zone string) int { return s.count(zone, "IXFR") }

// CountAXFR is how many full transfers of zone succeeded, AXFR-style
// answers to IXFR included.
func (s *Secondary) CountAXFR(zone string) int { return s.count(zone, "AXFR") }

func (s *Secondary) count(zone, kind string) int {
	n := 0
	for _, tr := range s.Transfers(zone) {
		if tr.Kind == kind {
			n++
		}
	}
	return n
}

// Notifies is how many NOTIFY messages for zone the secondary logged
// receiving (each retransmission counts).
func (s *Secondary) Notifies(zone string) int {
	var marker string
	switch s.kind {
	case "bind":
		marker = "received notify for zone '" + bare(fqdn(zone)) + "'"
	case "knot":
		marker = "[" + fqdn(zone) + "] notify, incoming,"
	case "nsd":
		marker = "notify for " + fqdn(zone) + " from "
	case "powerdns":
		marker = "Received NOTIFY for " + bare(fqdn(zone)) + " from "
	}
	n := 0
	for line := range strings.Lines(s.Log()) {
		if strings.Contains(line, marker) {
			n++
		}
	}
	return n
}

// BIND 9.18 at debug level 3 logs, per transfer:
//
//	transfer of 'z/IN' from 127.0.0.1#5300: got incremental response   (or nonincremental)
//	transfer of 'z/IN' from 127.0.0.1#5300: Transfer status: success
//	transfer of 'z/IN' from 127.0.0.1#5300: Transfer completed: 1 messages, … (serial 7)
var bindLine = regexp.MustCompile(`transfer of '([^/']+)/IN' from \S+#\d+: (.*)$`)

var bindSerial = regexp.MustCompile(`\(serial (\d+)\)`)

func parseBIND(log string) []Transfer {
	var out []Transfer
	kind := map[string]string{}   // zone → kind of the response being received
	status := map[string]string{} // zone → status of the transfer ending
	for line := range strings.Lines(log) {
		m := bindLine.FindStringSubmatch(strings.TrimSpace(line))
		if m == nil {
			continue
		}
		zone, msg := fqdn(m[1]), m[2]
		switch {
		case msg == "got incremental response":
			kind[zone] = "IXFR"
		case msg == "got nonincremental response":
			kind[zone] = "AXFR"
		case strings.HasPrefix(msg, "Transfer status: "):
			status[zone] = strings.TrimPrefix(msg, "Transfer status: ")
		case strings.HasPrefix(msg, "Transfer completed: "):
			if status[zone] == "success" && kind[zone] != "" {
				out = append(out, Transfer{Zone: zone, Kind: kind[zone], Serial: serialIn(bindSerial, msg)})
			}
			delete(kind, zone)
			delete(status, zone)
		}
	}
	return out
}

// Knot 3.x logs, per transfer:
//
//	[z.] IXFR, incoming, remote 127.0.0.1@5300, finished, …   (or AXFR; an
//	     AXFR-style IXFR is logged as an AXFR)
//	[z.] refresh, remote 127.0.0.1@5300, zone updated, …, serial 6 -> 7, …
//
// An IXFR that finishes but cannot be applied falls back to an AXFR,
// whose finished line comes before the refresh line.
var knotLine = regexp.MustCompile(`\[([^\]]+)\] (.*)$`)

var knotSerial = regexp.MustCompile(`serial \S+ -> (\d+)`)

func parseKnot(log string) []Transfer {
	var out []Transfer
	kind := map[string]string{} // zone → kind of the last finished transfer
	for line := range strings.Lines(log) {
		m := knotLine.FindStringSubmatch(strings.TrimSpace(line))
		if m == nil {
			continue
		}
		zone, msg := fqdn(m[1]), m[2]
		switch {
		case strings.HasPrefix(msg, "IXFR, incoming,") && strings.Contains(msg, ", finished,"):
			kind[zone] = "IXFR"
		case strings.HasPrefix(msg, "AXFR, incoming,") && strings.Contains(msg, ", finished,"):
			kind[zone] = "AXFR"
		case strings.HasPrefix(msg, "refresh, ") && strings.Contains(msg, "zone updated"):
			if kind[zone] != "" {
				out = append(out, Transfer{Zone: zone, Kind: kind[zone], Serial: serialIn(knotSerial, msg)})
			}
			delete(kind, zone)
		}
	}
	return out
}

func serialIn(re *regexp.Regexp, msg string) uint32 {
	m := re.FindStringSubmatch(msg)
	if m == nil {
		return 0
	}
	return serialOf(m[1])
}

// NSD 4.x logs, at verbosity 2, per transfer received and committed:
//
//	xfrd: zone z committed "received update to serial 7 at 2026-… from 127.0.0.1@5300"
//
// with the zone's name without the trailing dot, whether the transfer was
// incremental or not.
var nsdLine = regexp.MustCompile(`xfrd: zone (\S+) committed "received update to serial (\d+) `)

func parseNSD(log string) []Transfer {
	return transfersMatching(log, nsdLine, func(m []string) Transfer {
		return Transfer{Zone: fqdn(m[1]), Serial: serialOf(m[2])}
	})
}

// PowerDNS 4.7 logs, per transfer stored:
//
//	AXFR-in zone: 'z', primary: '127.0.0.1', zone committed with serial 7
//	IXFR-in zone: 'z', primary: '127.0.0.1', got 1 delta, zone committed with serial 8
//
// with the zone's name without the trailing dot. An IXFR that finds the
// zone current (the answer is the SOA alone, as when two NOTIFYs queued
// two checks) is logged as "got 0 deltas, zone committed with serial 0":
// no transfer.
var powerDNSLine = regexp.MustCompile(`\b(AXFR|IXFR)-in zone: '([^']+)', .*zone committed with serial (\d+)`)

func parsePowerDNS(log string) []Transfer {
	all := transfersMatching(log, powerDNSLine, func(m []string) Transfer {
		return Transfer{Zone: fqdn(m[2]), Kind: m[1], Serial: serialOf(m[3])}
	})
	return slices.DeleteFunc(all, func(tr Transfer) bool { return tr.Kind == "IXFR" && tr.Serial == 0 })
}

// transfersMatching makes a Transfer of every log line re matches, for
// servers that log one line per transfer.
func transfersMatching(log string, re *regexp.Regexp, transfer func(match []string) Transfer) []Transfer {
	var out []Transfer
	for line := range strings.Lines(log) {
		if m := re.FindStringSubmatch(line); m != nil {
			out = append(out, transfer(m))
		}
	}
	return out
}

func serialOf(digits string) uint32 {
	n, _ := strconv.ParseUint(digits, 10, 32)
	return uint32(n)
}
