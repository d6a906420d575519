package subproc

import "syscall"

// Attr is how a server that its starter stops itself is started: in its
// own process group (a ^C to the starter does not reach it before the
// starter's cleanup does), and sent SIGTERM by the kernel when the
// starter dies without stopping it (go test's timeout, a kill). The
// signal follows the OS thread that started the child; no goroutine here
// is locked to a thread, so the Go runtime does not end that thread
// early.
func Attr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGTERM}
}
