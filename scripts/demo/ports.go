package main

import (
	"bufio"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
)

// port is one address the demo prints: a protocol and a port of 127.0.0.1.
type port struct {
	what  string // "DNS", "API", …: how the message names it
	proto string // "tcp" or "udp"
	n     int
	flag  string // the demo's flag that moves it, "" when the demo picks it
}

func (p port) String() string { return fmt.Sprintf("%s port %d/%s", p.what, p.n, p.proto) }

// checkFree binds each port for a moment and reports the first one taken,
// with the process holding it when it can be found.
func checkFree(ports []port) error {
	for _, p := range ports {
		addr := "127.0.0.1:" + strconv.Itoa(p.n)
		var err error
		if p.proto == "udp" {
			var c net.PacketConn
			if c, err = net.ListenPacket("udp", addr); err == nil {
				c.Close()
			}
		} else {
			var l net.Listener
			if l, err = net.Listen("tcp", addr); err == nil {
				l.Close()
			}
		}
		if err != nil {
			return taken(p, err)
		}
	}
	return nil
}

// taken is the error for a port another process holds.
func taken(p port, err error) error {
	msg := fmt.Sprintf("%s is taken (%v); it is held by %s", p, errors.Unwrap(err), describe(holders(p)))
	if p.flag != "" {
		msg += fmt.Sprintf("; stop that, or give the demo another port: -%s N (make run RUNFLAGS='-%s N')", p.flag, p.flag)
	}
	return errors.New(msg)
}

// holder is a process holding a socket.
type holder struct {
	pid     int
	cmdline string
}

// describe names the holders, or says how to find them.
func describe(hs []holder, found bool) string {
	if !found {
		return "a process this system does not show here (ss -lnptu or lsof -i names it)"
	}
	if len(hs) == 0 {
		return "a process this user cannot see (sudo ss -lnptu names it)"
	}
	var parts []string
	for _, h := range hs {
		parts = append(parts, fmt.Sprintf("pid %d (%s)", h.pid, h.cmdline))
	}
	return strings.Join(parts, ", ")
}

// holders returns the processes holding a socket bound to p that
// 127.0.0.1 reaches; found is false where /proc/net is missing (not
// Linux).
func holders(p port) (hs []holder, found bool) {
	inodes, found := listeners(p)
	if !found {
		return nil, false
	}
	owners := socketOwners()
	for _, ino := range inodes {
		if pid, ok := owners[ino]; ok && !slices.ContainsFunc(hs, func(h holder) bool { return h.pid == pid }) {
			hs = append(hs, holder{pid, cmdline(pid)})
		}
	}
	return hs, true
}

// listeners returns the inodes of the sockets listening on p (TCP in
// LISTEN, UDP bound and unconnected) at 127.0.0.1, 0.0.0.0, :: or their
// IPv4-mapped forms, from /proc/net.
func listeners(p port) (inodes []string, found bool) {
	state := "0A" // TCP_LISTEN
	if p.proto == "udp" {
		state = "07" // TCP_CLOSE: bound, not connected
	}
	hexPort := fmt.Sprintf("%04X", p.n)
	for _, file := range []string{p.proto, p.proto + "6"} {
		f, err := os.Open(filepath.Join("/proc/net", file))
		if err != nil {
			continue
		}
		found = true
		sc := bufio.NewScanner(f)
		for sc.Scan() {
			fields := strings.Fields(sc.Text())
			if len(fields) < 10 || fields[3] != state {
				continue
			}
			ip, prt, ok := strings.Cut(fields[1], ":")
			if ok && prt == hexPort && reachesLoopback(ip) {
				inodes = append(inodes, fields[9])
			}
		}
		f.Close()
	}
	return inodes, found
}

// reachesLoopback reports whether a socket bound to ip, as /proc/net
// writes it, receives what is sent to 127.0.0.1.
func reachesLoopback(ip string) bool {
	const v4, any4, mapped = "0100007F", "00000000", "0000000000000000FFFF0000"
	switch ip {
	case v4, any4, strings.Repeat("0", 32), mapped + v4, mapped + any4:
		return true
	}
	return false
}

// socketOwners maps socket inodes to the pid holding them, as far as this
// user may read /proc/PID/fd.
func socketOwners() map[string]int {
	owners := map[string]int{}
	pids, _ := filepath.Glob("/proc/[0-9]*")
	for _, dir := range pids {
		pid, err := strconv.Atoi(filepath.Base(dir))
		if err != nil {
			continue
		}
		for _, ino := range sockets(pid) {
			owners[ino] = pid
		}
	}
	return owners
}

// sockets returns the inodes of the sockets pid holds.
func sockets(pid int) []string {
	dir := filepath.Join("/proc", strconv.Itoa(pid), "fd")
	fds, _ := os.ReadDir(dir)
	var inodes []string
	for _, fd := range fds {
		link, err := os.Readlink(filepath.Join(dir, fd.Name()))
		if ino, ok := strings.CutPrefix(link, "socket:["); err == nil && ok {
			inodes = append(inodes, strings.TrimSuffix(ino, "]"))
		}
	}
	return inodes
}

func cmdline(pid int) string {
	b, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "cmdline"))
	if err != nil || len(b) == 0 {
		return "?"
	}
	s := strings.TrimSpace(strings.ReplaceAll(string(b), "\x00", " "))
	if len(s) > 80 {
		s = s[:77] + "..."
	}
	return s
}

// family returns pid and the processes whose parent it is.
func family(pid int) []int {
	out := []int{pid}
	stats, _ := filepath.Glob("/proc/[0-9]*/stat")
	for _, path := range stats {
		b, err := os.ReadFile(path)
		if err != nil {
			continue
		}
		// "pid (comm) state ppid …": comm may hold spaces and parentheses.
		s := string(b)
		i := strings.LastIndex(s, ") ")
		if i < 0 {
			continue
		}
		fields := strings.Fields(s[i+2:])
		if len(fields) < 2 {
			continue
		}
		if ppid, _ := strconv.Atoi(fields[1]); ppid == pid {
			child, _ := strconv.Atoi(filepath.Base(filepath.Dir(path)))
			out = append(out, child)
		}
	}
	return out
}

// servedBy checks that the sockets listening on p all belong to the
// process pid or its children, and that there is one; it checks nothing
// where /proc/net is missing.
func servedBy(p port, pid int, name string) error {
	inodes, found := listeners(p)
	if !found {
		return nil
	}
	own := map[string]bool{}
	for _, q := range family(pid) {
		for _, ino := range sockets(q) {
			own[ino] = true
		}
	}
	var others []string
	for _, ino := range inodes {
		if !own[ino] {
			others = append(others, ino)
		}
	}
	switch {
	case len(others) > 0:
		hs, _ := holders(p)
		hs = slices.DeleteFunc(hs, func(h holder) bool { return slices.Contains(family(pid), h.pid) })
		return fmt.Errorf("%s is shared: besides %s (pid %d) it is held by %s, which may get what is sent there", p, name, pid, describe(hs, true))
	case len(inodes) == 0 || len(own) == 0:
		return fmt.Errorf("%s: %s (pid %d) holds no socket listening there", p, name, pid)
	}
	return nil
}
