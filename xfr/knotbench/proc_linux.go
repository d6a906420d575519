package knotbench

import "syscall"

// procAttr puts a server in its own process group (a ^C to the benchmark
// does not reach it before Stop does) and has the kernel send it SIGTERM
// when the benchmark dies without stopping it (go test's timeout, a
// kill): a knotd holding a zone of 1M records must not outlive it. The
// signal follows the OS thread that started the child; the package locks
// no goroutine to a thread, so the Go runtime does not end that thread
// early.
func procAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGTERM}
}
