package secondarytest

import "syscall"

// ProcAttr is how tests start a server they stop themselves: in its own
// process group (a ^C to the test does not reach it before the test's
// cleanup does), and sent SIGTERM by the kernel when the test process dies
// without stopping it (go test's timeout, a kill), so that no server
// outlives its test. The signal follows the OS thread that started the
// child; tests lock no goroutine to a thread, so the Go runtime does not
// end that thread early.
func ProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGTERM}
}
