package knotbench

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strconv"
	"syscall"
	"time"

	"github.com/cnsd/cnsd/subproc"
)

// clockTicks is USER_HZ, the unit of utime and stime in /proc/<pid>/stat:
// 100 on every Linux architecture Go supports (sysconf needs cgo).
const clockTicks = 100

// A Server is a DNS server under test running as a child process, so
// that its CPU time is its own and not the client's.
type Server struct {
	Name string // "cnsd", "knot" or "nsd"
	UDP  string // host:port of its UDP socket
	TCP  string // host:port of its TCP socket

	cmd  *exec.Cmd
	done chan struct{}
	// ctl and lines are a cnsd child's stdin and the lines of its
	// stdout (StartCnsd).
	ctl   io.Writer
	lines chan string
	// knotc is the command line that controls a knotd (StartKnot).
	knotc []string
	err   error // of Wait, once done is closed
}

// start runs cmd (see procAttr) and notes when it exits.
func (s *Server) start(cmd *exec.Cmd) error {
	cmd.SysProcAttr = subproc.Attr()
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("start %s: %w", s.Name, err)
	}
	s.cmd, s.done = cmd, make(chan struct{})
	go func() {
		s.err = cmd.Wait()
		close(s.done)
	}()
	return nil
}

// exited reports whether the process has ended, with its error.
func (s *Server) exited() (bool, error) {
	select {
	case <-s.done:
		return true, s.err
	default:
		return false, nil
	}
}

// CPU returns the user and system CPU time the server's process (all its
// threads) and the processes it started (NSD forks its servers) have
// used so far, at a resolution of 10 ms.
func (s *Server) CPU() (time.Duration, error) {
	return overTree(s.cmd.Process.Pid, processCPU)
}

// overTree sums what read gives for pid and for every process below it.
func overTree[T time.Duration | int64](pid int, read func(int) (T, error)) (T, error) {
	total, err := read(pid)
	if err != nil {
		return 0, err
	}
	for _, child := range descendants(pid) {
		if v, err := read(child); err == nil { // it may have exited since
			total += v
		}
	}
	return total, nil
}

// descendants lists the processes below pid, from /proc/<pid>/stat's
// parent field.
func descendants(pid int) []int {
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return nil
	}
	children := map[int][]int{}
	for _, e := range entries {
		child, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		b, err := os.ReadFile("/proc/" + e.Name() + "/stat")
		if err != nil {
			continue
		}
		i := bytes.LastIndexByte(b, ')')
		if f := bytes.Fields(b[i+1:]); i >= 0 && len(f) > 1 {
			if ppid, err := strconv.Atoi(string(f[1])); err == nil {
				children[ppid] = append(children[ppid], child)
			}
		}
	}
	var out []int
	for queue := children[pid]; len(queue) > 0; queue = queue[1:] {
		out = append(out, queue[0])
		queue = append(queue, children[queue[0]]...)
	}
	return out
}

// Memory returns the proportional set size (PSS) of the server's process
// and of the processes it started: the memory the server takes, pages
// shared between processes (NSD's forked servers share the zone with
// their parent) split among them rather than counted in each.
func (s *Server) Memory() (int64, error) {
	return overTree(s.cmd.Process.Pid, processPSS)
}

// processPSS reads a process's PSS, in bytes, from
// /proc/<pid>/smaps_rollup.
func processPSS(pid int) (int64, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/smaps_rollup", pid))
	if err != nil {
		return 0, fmt.Errorf("process memory: %w", err)
	}
	for line := range bytes.Lines(b) {
		if f := bytes.Fields(line); len(f) == 3 && string(f[0]) == "Pss:" && string(f[2]) == "kB" {
			kb, err := strconv.ParseInt(string(f[1]), 10, 64)
			if err != nil {
				return 0, fmt.Errorf("process memory: %w", err)
			}
			return kb << 10, nil
		}
	}
	return 0, errors.New("process memory: no Pss in smaps_rollup")
}

// processCPU reads utime+stime of a process from /proc/<pid>/stat.
func processCPU(pid int) (time.Duration, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, fmt.Errorf("process cpu time: %w", err)
	}
	// The command name in parentheses may hold spaces; fields are
	// counted after its closing parenthesis, from field 3 (state).
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return 0, errors.New("process cpu time: malformed /proc stat")
	}
	f := bytes.Fields(b[i+1:])
	if len(f) < 13 {
		return 0, errors.New("process cpu time: short /proc stat")
	}
	var ticks int64
	for _, field := range f[11:13] { // utime (14) and stime (15)
		n, err := strconv.ParseInt(string(field), 10, 64)
		if err != nil {
			return 0, fmt.Errorf("process cpu time: %w", err)
		}
		ticks += n
	}
	return time.Duration(ticks) * time.Second / clockTicks, nil
}

// Stop terminates the server and waits for it; it is idempotent.
func (s *Server) Stop() {
	if s.cmd == nil {
		return
	}
	if done, _ := s.exited(); done {
		return
	}
	_ = s.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-s.done:
	case <-time.After(10 * time.Second):
		_ = s.cmd.Process.Kill()
		<-s.done
	}
}
