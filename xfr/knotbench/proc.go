package knotbench

import (
	"bytes"
	"errors"
	"fmt"
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
	Name string // "cnsd" or "knot"
	UDP  string // host:port of its UDP socket
	TCP  string // host:port of its TCP socket

	cmd  *exec.Cmd
	done chan struct{}
	err  error // of Wait, once done is closed
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
// threads) has used so far, at a resolution of 10 ms.
func (s *Server) CPU() (time.Duration, error) {
	return processCPU(s.cmd.Process.Pid)
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
